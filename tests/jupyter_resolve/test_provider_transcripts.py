"""Transcripts of servers the LiteLLM proxy cannot stand in for, replayed byte for byte by the
fake OpenAI server (tests/fakes) into the whole chain: client → gateway → agent-httpd → gateway
inference endpoint → ``openai`` provider → fake server.

llama.cpp (tests/fixtures/providers/llamacpp_tool_call_stream.json, whose ``source`` names the
server code its shapes were read from): a first chunk with ``content: null``, reasoning as
``reasoning_content``, a tool call whose first delta has no ``arguments`` key and whose id is 32
bare characters, ``finish_reason`` alone on an empty delta, and usage on a last chunk with
``choices: []`` plus llama.cpp's ``timings``, the second round reporting the prompt it reused.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jupyter_resolve.providers import OpenAIProvider
from tests.conftest import Server
from tests.fakes._server import Reply
from tests.fakes.openai_server import DONE, FakeOpenAI, stream

FIXTURES = Path(__file__).parents[1] / "fixtures" / "providers"


def llamacpp_replies() -> tuple[dict[str, Any], list[Reply]]:
    """The fixture, and each of its rounds as llama.cpp writes it: compact JSON, ``data: ``."""
    fixture: dict[str, Any] = json.loads(
        (FIXTURES / "llamacpp_tool_call_stream.json").read_text(encoding="utf-8")
    )
    replies = []
    for chunks in fixture["rounds"]:
        frames = [
            b"data: " + json.dumps(c, separators=(",", ":")).encode() + b"\n\n" for c in chunks
        ]
        replies.append(stream([*frames, DONE]))
    return fixture, replies


async def test_a_llamacpp_tool_call_stream_runs_its_tool_and_finishes(
    server: Server, gateway: Any
) -> None:
    fixture, replies = llamacpp_replies()
    first = fixture["rounds"][0]
    call_id = first[7]["choices"][0]["delta"]["tool_calls"][0]["id"]
    assert "arguments" not in first[7]["choices"][0]["delta"]["tool_calls"][0]["function"]
    async with FakeOpenAI(replies) as fake:
        gateway.provider = OpenAIProvider(
            fake.base_url, None, fixture["model"], timeout=10, max_retries=0
        )
        events = await server.chat("compute 6*7 with python")
    assert events.of("run.completed")[0]["reason"] == "stop", events.of("run.error")
    reasoning = "".join(d["text"] for d in events.of("reasoning.delta"))
    assert reasoning == "The user wants 6*7; I will run it in Python."
    (requested,) = events.of("tool.requested")
    assert requested["name"] == "python" and requested["arguments"] == {"code": "print(6*7)"}
    assert events.of("tool.completed")[0]["output"] == "42"
    assert events.text() == "6 times 7 is 42."
    usage = [
        (u["prompt_tokens"], u["completion_tokens"], u["cached_tokens"]) for u in events.of("usage")
    ]
    assert usage == [(186, 41, 0), (239, 8, 227)]
    # the second request answers llama.cpp's bare id, and does not echo the reasoning back
    *_, assistant, tool = fake.requests[1].body["messages"]
    assert assistant["tool_calls"][0]["id"] == call_id
    assert assistant["tool_calls"][0]["function"] == {
        "name": "python",
        "arguments": '{"code": "print(6*7)"}',
    }
    assert "reasoning_content" not in assistant
    assert tool["role"] == "tool" and tool["tool_call_id"] == call_id and "42" in tool["content"]
    assert fake.requests[0].body["stream_options"] == {"include_usage": True}
