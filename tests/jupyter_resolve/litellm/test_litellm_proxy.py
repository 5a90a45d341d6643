"""The gateway against real server code: the LiteLLM proxy (``make setup`` installs it in
.venv/litellm) serving mock responses as an OpenAI-compatible server, on loopback, no network.

What it shows that our fakes do not know: LiteLLM's stream (three-character content pieces, a
usage chunk that still carries a choice, its own ``cost`` in usage), its ``/v1/models``, and its
master-key auth. LiteLLM's mock does not stream tool calls, so tool calls through it are not
covered here (tests/fakes cover them).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from jupyter_resolve.providers import OpenAIProvider
from tests.conftest import Server

REPO = Path(__file__).parents[3]
LITELLM = Path(os.environ.get("VENV", REPO / ".venv")) / "litellm" / "bin" / "litellm"
if not LITELLM.exists():  # a worktree shares the main checkout's venv
    LITELLM = Path(sys.prefix) / "litellm" / "bin" / "litellm"
MASTER_KEY = "sk-lite-master-0123456789abcdef"
MOCK_TEXT = "Hello from the LiteLLM mock."
CONFIG = f"""
model_list:
  - model_name: mock-gpt
    litellm_params:
      model: openai/gpt-4o-mini
      api_key: sk-not-used
      mock_response: "{MOCK_TEXT}"
  - model_name: mock-other
    litellm_params:
      model: openai/gpt-4o-mini
      api_key: sk-not-used
      mock_response: "The other mock."
general_settings:
  master_key: {MASTER_KEY}
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def litellm_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    assert LITELLM.exists(), f"no LiteLLM proxy at {LITELLM}: run `make setup`"
    folder = tmp_path_factory.mktemp("litellm")
    (folder / "config.yaml").write_text(CONFIG)
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    # its shipped price list, not one fetched from the network
    env.update(LITELLM_TELEMETRY="False", LITELLM_LOG="ERROR", NO_PROXY="*")
    env.update(LITELLM_LOCAL_MODEL_COST_MAP="True")
    log = (folder / "proxy.log").open("wb")
    proc = subprocess.Popen(
        [str(LITELLM), "--config", "config.yaml", "--host", "127.0.0.1", "--port", str(port)],
        cwd=folder,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120  # readiness, not a timed assertion
        while True:
            assert proc.poll() is None, (folder / "proxy.log").read_text()[-2000:]
            try:
                if httpx.get(f"{url}/health/liveliness", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "the LiteLLM proxy did not start"
            time.sleep(0.5)
        yield f"{url}/v1"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def use_litellm(gateway: Any, url: str, model: str = "mock-gpt") -> None:
    gateway.provider = OpenAIProvider(url, MASTER_KEY, model, timeout=30, max_retries=0)


async def test_chat_streams_through_litellm(server: Server, gateway: Any, litellm_url: str) -> None:
    use_litellm(gateway, litellm_url)
    stream = await server.chat("hello", model="mock-gpt")
    assert stream.of("run.completed")[0]["reason"] == "stop", stream.types()
    assert stream.text() == MOCK_TEXT
    (usage,) = stream.of("usage")
    assert usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0
    assert usage["cached_tokens"] == 0
    # gpt-4o-mini is not the run's model name here (mock-gpt): no price, no cost
    assert "cost" not in usage


async def test_models_and_allowlist_through_litellm(
    server: Server, gateway: Any, litellm_url: str
) -> None:
    use_litellm(gateway, litellm_url)
    listed = (await server.get("/resolve/api/models")).json()
    assert [m["id"] for m in listed["models"]] == ["mock-gpt", "mock-other"]
    gateway.config.allowed_models = ["mock-other"]
    refused = await server.chat("hello", model="mock-gpt")
    assert refused.status == 400 and b"mock-other" in refused.body
    ok = await server.chat("hello")
    assert ok.text() == "The other mock."


async def test_a_wrong_key_reaches_the_person_in_litellms_words(
    server: Server, gateway: Any, litellm_url: str
) -> None:
    gateway.provider = OpenAIProvider(litellm_url, "sk-wrong-key-000000", "mock-gpt", timeout=30)
    stream = await server.chat("hello", model="mock-gpt")
    (error,) = stream.of("run.error")
    # a proxy without a database answers an unknown key 400 "No connected db." (not 401):
    # the person gets the provider's own words, never the key
    assert "answered 400: No connected db." in error["message"]
    assert "sk-wrong-key-000000" not in stream.body.decode()
