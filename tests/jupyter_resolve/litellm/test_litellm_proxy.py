"""The gateway against real server code: the LiteLLM proxy (conftest.py starts it) serving mock
responses as an OpenAI-compatible server, on loopback, no network.

What it shows that our fakes do not know: LiteLLM's stream (three-character content pieces, a
usage chunk that still carries a choice, its own ``cost`` in usage), its ``/v1/models``, its
master-key auth, and how it streams a tool call: whole in one chunk (role, id, name and all the
arguments together, ``index`` last, no ``content`` key), ``finish_reason`` in a chunk of its own.
The tool call is scripted by scripted_mock.py, a proxy callback, because a config's
``mock_tool_calls`` is not streamed (``litellm.main.mock_completion`` reads it only when not
streaming) and a ``mock_response`` mapping makes the streamed request fail (see that module).
"""

from __future__ import annotations

import json
from typing import Any

import httpx

from jupyter_resolve.providers import OpenAIProvider
from tests.conftest import Server
from tests.jupyter_resolve.litellm.conftest import MASTER_KEY, MOCK_TEXT


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
    assert [m["id"] for m in listed["models"]] == [
        "mock-gpt",
        "mock-other",
        "scripted-tools",
        "scripted-thinking",
    ]
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
    # the person gets the provider's own words (in the plain-words form of issue 30.6), never
    # the key
    assert "(400): No connected db." in error["message"]
    assert "sk-wrong-key-000000" not in stream.body.decode()


async def test_a_streamed_tool_call_through_litellm_runs_and_finishes(
    server: Server, gateway: Any, litellm_url: str
) -> None:
    use_litellm(gateway, litellm_url, "scripted-tools")
    stream = await server.chat("compute 6*7", model="scripted-tools")
    (requested,) = stream.of("tool.requested")
    assert requested["name"] == "python" and requested["arguments"] == {"code": "print(6*7)"}
    (completed,) = stream.of("tool.completed")
    assert completed["output"] == "42"
    assert stream.text() == "LiteLLM says the answer is 42."
    assert stream.of("run.completed")[0]["reason"] == "stop", stream.types()
    # two rounds through the proxy, each with its usage chunk
    assert len(stream.of("usage")) == 2


async def test_litellm_streams_a_tool_call_whole_in_one_chunk(litellm_url: str) -> None:
    """The shape the chain above consumed, read off the wire: so the docstring stays true."""
    body = {
        "model": "scripted-tools",
        "stream": True,
        "messages": [{"role": "user", "content": "compute 6*7"}],
    }
    headers = {"Authorization": f"Bearer {MASTER_KEY}"}
    async with httpx.AsyncClient(timeout=30) as client:
        reply = await client.post(f"{litellm_url}/chat/completions", json=body, headers=headers)
    lines = [line[6:] for line in reply.text.splitlines() if line.startswith("data: ")]
    assert lines[-1] == "[DONE]"
    chunks = [json.loads(line) for line in lines[:-1]]
    deltas = [c["choices"][0]["delta"] for c in chunks if c["choices"]]
    (with_call,) = [d for d in deltas if d.get("tool_calls")]
    assert "content" not in with_call and with_call["role"] == "assistant"
    (call,) = with_call["tool_calls"]
    assert call["index"] == 0 and call["id"] == "call_litellm_1"
    assert call["function"] == {"name": "python", "arguments": '{"code": "print(6*7)"}'}
    finishes = [c["choices"][0].get("finish_reason") for c in chunks if c["choices"]]
    assert finishes[-1] == "tool_calls" and deltas[finishes.index("tool_calls")] == {}
