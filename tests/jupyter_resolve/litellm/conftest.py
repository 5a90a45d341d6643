"""One LiteLLM proxy (real server code, installed by ``make setup`` in .venv/litellm) for the tests
in this folder, on loopback, serving mock responses; no network (its shipped price list, no
telemetry, no upstream reachable)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.launcher import free_port

REPO = Path(__file__).parents[3]
LITELLM = Path(os.environ.get("VENV", REPO / ".venv")) / "litellm" / "bin" / "litellm"
if not LITELLM.exists():  # a worktree shares the main checkout's venv
    LITELLM = Path(sys.prefix) / "litellm" / "bin" / "litellm"
MASTER_KEY = "sk-lite-master-0123456789abcdef"
MOCK_TEXT = "Hello from the LiteLLM mock."
# scripted-* models are answered by scripted_mock.py's hook; their api_base is a closed port, so
# a request the hook failed to mock errors instead of leaving the machine.
# use_chat_completions_url_for_anthropic_messages: /v1/messages for an openai/ model goes through
# LiteLLM's Anthropic-to-chat-completions bridge (not its Responses API bridge), where a mocked
# ModelResponse is streamed back as Anthropic events.
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
  - model_name: scripted-tools
    litellm_params:
      model: openai/gpt-4o-mini
      api_key: sk-not-used
      api_base: http://127.0.0.1:9/v1
  - model_name: scripted-thinking
    litellm_params:
      model: openai/gpt-4o-mini
      api_key: sk-not-used
      api_base: http://127.0.0.1:9/v1
litellm_settings:
  callbacks: scripted_mock.scripted_mock
  use_chat_completions_url_for_anthropic_messages: true
general_settings:
  master_key: {MASTER_KEY}
"""


@pytest.fixture(scope="session")
def litellm_base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The proxy's root URL (``/v1/...`` and ``/v1/messages`` hang off it)."""
    assert LITELLM.exists(), f"no LiteLLM proxy at {LITELLM}: run `make setup`"
    folder = tmp_path_factory.mktemp("litellm")
    (folder / "config.yaml").write_text(CONFIG)
    # the proxy loads callbacks named in its config from the config's folder
    shutil.copy(Path(__file__).with_name("scripted_mock.py"), folder / "scripted_mock.py")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    # its shipped price list, not one fetched from the network
    env.update(LITELLM_TELEMETRY="False", LITELLM_LOG="ERROR", NO_PROXY="*")
    env.update(LITELLM_LOCAL_MODEL_COST_MAP="True")
    env.pop("PYTHONPATH", None)  # the proxy's own venv, not ours
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
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture
def litellm_url(litellm_base: str) -> str:
    """The proxy as an OpenAI-compatible server (base URL ending in ``/v1``)."""
    return f"{litellm_base}/v1"
