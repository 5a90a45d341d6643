"""make_provider, the public surface, and the fakes as subprocesses."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

import jupyter_resolve.providers as providers
from jupyter_resolve.providers import (
    AnthropicProvider,
    OpenAIProvider,
    ScriptedProvider,
    make_provider,
)

REPO = Path(__file__).resolve().parents[3]
COMMON = {
    "model": "",
    "base_url": "",
    "api_key": None,
    "api_key_env": "",
    "script": None,
    "stream_usage": True,
    "timeout": 5.0,
}


def test_public_surface() -> None:
    assert sorted(providers.__all__) == [
        "AnthropicProvider",
        "Chunk",
        "OpenAIProvider",
        "Provider",
        "ScriptedProvider",
        "make_provider",
    ]


def test_make_provider_kinds(tmp_path: Path) -> None:
    scripted = make_provider("scripted", **{**COMMON, "script": str(tmp_path / "s.jsonl")})
    assert isinstance(scripted, ScriptedProvider) and scripted.script == tmp_path / "s.jsonl"
    assert isinstance(make_provider("scripted", **COMMON), ScriptedProvider)
    openai = make_provider(
        "openai", **{**COMMON, "base_url": "http://127.0.0.1:9/v1", "stream_usage": False}
    )
    assert isinstance(openai, OpenAIProvider) and openai.stream_usage is False
    assert openai.describe()["base_url"] == "http://127.0.0.1:9/v1"
    anthropic = make_provider("anthropic", **{**COMMON, "model": "claude"}, max_retries=1)
    assert isinstance(anthropic, AnthropicProvider) and anthropic.max_retries == 1
    assert anthropic.describe()["base_url"] == "https://api.anthropic.com"
    with pytest.raises(ValueError, match="unknown provider 'nope'"):
        make_provider("nope", **COMMON)


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
