"""The public surface, and the fakes as subprocesses (the providers' registry:
test_registry.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

import jupyter_resolve.providers as providers

REPO = Path(__file__).resolve().parents[3]


def test_public_surface() -> None:
    assert sorted(providers.__all__) == [
        "AnthropicProvider",
        "Chunk",
        "OpenAIProvider",
        "Provider",
        "ScriptedProvider",
        "make_provider",
    ]


@pytest.mark.parametrize(
    ("module", "scenario", "path"),
    [
        ("tests.fakes.openai_server", "long", "/v1/chat/completions"),
        ("tests.fakes.anthropic_server", "text", "/v1/messages"),
    ],
)
def test_fake_as_subprocess(module: str, scenario: str, path: str) -> None:
    cmd = [sys.executable, "-m", module, "--port", "0", "--scenario", scenario, "--chunks", "3"]
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        port = json.loads(proc.stdout.readline())["port"]
        answer = httpx.post(f"http://127.0.0.1:{port}{path}", json={"stream": True}, timeout=5)
        assert answer.status_code == 200
        assert "data:" in answer.text
        if scenario == "long":
            assert answer.text.count('"content": "tok') == 3 and answer.text.rstrip().endswith(
                "[DONE]"
            )
    finally:
        proc.terminate()
        proc.wait(timeout=5)
        if proc.stdout is not None:
            proc.stdout.close()
