"""The gateway's ``anthropic`` provider against the LiteLLM proxy's Anthropic-format endpoint
(``POST /v1/messages``, real server code; conftest.py starts the proxy), on loopback.

What LiteLLM's endpoint can serve as a mock, read from its source
(``litellm/llms/anthropic/pass_through/messages/handler.py``, ``anthropic_messages_handler``):

- a config's string ``mock_response`` is answered by ``messages/utils.py``'s ``mock_response``
  before any streaming: one JSON message (fixed usage 2095/503), whatever the request's
  ``stream``. Our provider asks for a stream, so a person pointed at such a model gets a clear
  error, not a crash (the last test);
- a ``ModelResponse`` mock (set by scripted_mock.py's proxy callback) for an ``openai/`` model
  skips that branch and goes through LiteLLM's Anthropic-to-chat-completions bridge
  (``use_chat_completions_url_for_anthropic_messages``), whose ``mock_completion`` streams it and
  whose bridge turns the chunks into Anthropic events: ``message_start`` with zero usage, a
  ``tool_use`` block whose input arrives whole in one ``input_json_delta``, usage (input tokens
  too) only on ``message_delta``. That is the streamed path tested here, text and a tool call,
  and thinking before the call (the thinking text whole in ``content_block_start``, the signature
  both there and as ``signature_delta``).
"""

from __future__ import annotations

import json
from typing import Any

import httpx

from jupyter_resolve.providers import AnthropicProvider
from tests.conftest import Server
from tests.jupyter_resolve.litellm.conftest import MASTER_KEY


def use_litellm_messages(gateway: Any, base: str, model: str) -> None:
    gateway.provider = AnthropicProvider(base, MASTER_KEY, model, timeout=30, max_retries=0)


async def test_a_tool_call_then_text_streamed_by_litellms_messages_endpoint(
    server: Server, gateway: Any, litellm_base: str
) -> None:
    use_litellm_messages(gateway, litellm_base, "scripted-tools")
    stream = await server.chat("compute 6*7", model="scripted-tools")
    assert stream.of("run.completed")[0]["reason"] == "stop", stream.of("run.error")
    (requested,) = stream.of("tool.requested")
    assert requested["name"] == "python" and requested["arguments"] == {"code": "print(6*7)"}
    assert stream.of("tool.completed")[0]["output"] == "42"
    assert stream.text() == "LiteLLM says the answer is 42."
    usage = stream.of("usage")
    assert len(usage) == 2 and all(u["prompt_tokens"] > 0 for u in usage), usage


async def test_a_string_mock_on_the_messages_endpoint_is_not_a_stream(
    server: Server, gateway: Any, litellm_base: str
) -> None:
    use_litellm_messages(gateway, litellm_base, "mock-gpt")
    stream = await server.chat("hello", model="mock-gpt")
    (error,) = stream.of("run.error")
    assert "answered JSON instead of a stream" in error["message"]
    assert stream.of("run.completed")[0]["reason"] == "error"
    assert MASTER_KEY not in stream.body.decode()


async def test_litellms_messages_stream_reads_as_the_docstring_says(litellm_base: str) -> None:
    body = {
        "model": "scripted-tools",
        "max_tokens": 100,
        "stream": True,
        "messages": [{"role": "user", "content": "compute 6*7"}],
    }
    headers = {"x-api-key": MASTER_KEY, "anthropic-version": "2023-06-01"}
    async with httpx.AsyncClient(timeout=30) as client:
        reply = await client.post(f"{litellm_base}/v1/messages", json=body, headers=headers)
    assert reply.headers["content-type"].startswith("text/event-stream")
    events = [json.loads(line[5:]) for line in reply.text.splitlines() if line.startswith("data:")]
    assert [e["type"] for e in events] == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert events[0]["message"]["usage"]["input_tokens"] == 0
    assert events[1]["content_block"]["type"] == "tool_use"
    assert events[2]["delta"] == {
        "type": "input_json_delta",
        "partial_json": '{"code": "print(6*7)"}',
    }
    assert events[4]["delta"]["stop_reason"] == "tool_use"
    assert events[4]["usage"]["input_tokens"] > 0


async def test_thinking_with_a_tool_call_through_litellms_messages_endpoint(
    server: Server, gateway: Any, litellm_base: str
) -> None:
    """LiteLLM's bridge sends the thinking text whole in ``content_block_start`` (no
    ``thinking_delta``) and the signature twice (in the block and as ``signature_delta``); the
    scripted model answers the tool result only if the block came back unchanged."""
    gateway.provider = AnthropicProvider(
        litellm_base, MASTER_KEY, "scripted-thinking", timeout=30, max_retries=0, thinking=1024
    )
    stream = await server.chat("compute 6*7", model="scripted-thinking")
    assert stream.of("run.completed")[0]["reason"] == "stop", stream.of("run.error")
    assert stream.of("tool.completed")[0]["output"] == "42"
    assert stream.text() == "LiteLLM says the answer is 42."
    reasoning = "".join(d["text"] for d in stream.of("reasoning.delta"))
    assert reasoning == "Six times seven; run it."
