"""A fake Anthropic Messages API server (``POST /v1/messages``, streamed).

In-process: ``async with FakeAnthropic(scenario="tool_use") as fake: fake.base_url``.
As a subprocess (from the repository root)::

    python -m tests.fakes.anthropic_server --port 0 --scenario text   # prints {"port": N}
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from ._server import SSE_HEADERS, FakeServer, Part, Registry, Reply, Scenario, json_reply, main

MODEL = "claude-fake"
TEXT = "Hello from the fake Anthropic server."
ANSWER = "The answer is 42."
TOOL_CODE = "print(6*7)"
THINKING = "Let me think about it."
INPUT_TOKENS = 25


def event(name: str, obj: dict[str, Any]) -> bytes:
    """One frame, as Anthropic sends it: ``event:`` then ``data:``."""
    return f"event: {name}\ndata: {json.dumps(obj, ensure_ascii=False)}\n\n".encode()


def message_start() -> bytes:
    message: dict[str, Any] = {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": INPUT_TOKENS, "output_tokens": 1},
    }
    return event("message_start", {"type": "message_start", "message": message})


def block_start(index: int, block: dict[str, Any]) -> bytes:
    return event(
        "content_block_start",
        {"type": "content_block_start", "index": index, "content_block": block},
    )


def block_delta(index: int, delta: dict[str, Any]) -> bytes:
    return event(
        "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
    )


def block_stop(index: int) -> bytes:
    return event("content_block_stop", {"type": "content_block_stop", "index": index})


def text_block(index: int, text: str) -> list[bytes]:
    words = text.split(" ")
    pieces = [words[0]] + [" " + w for w in words[1:]]
    return [
        block_start(index, {"type": "text", "text": ""}),
        *[block_delta(index, {"type": "text_delta", "text": p}) for p in pieces],
        block_stop(index),
    ]


def finish(stop_reason: str, output_tokens: int) -> list[bytes]:
    return [
        event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": output_tokens},
            },
        ),
        event("message_stop", {"type": "message_stop"}),
    ]


def stream(frames: list[bytes]) -> Reply:
    return Reply(200, list(SSE_HEADERS), [Part(f) for f in frames])


def error(status: int, kind: str, message: str) -> Reply:
    return json_reply(status, {"type": "error", "error": {"type": kind, "message": message}})


def text_reply(text: str = TEXT) -> Reply:
    ping = event("ping", {"type": "ping"})
    return stream([message_start(), ping, *text_block(0, text), *finish("end_turn", 12)])


def text() -> Scenario:
    return [text_reply()]


def tool_use() -> Scenario:
    arguments = json.dumps({"code": TOOL_CODE})
    tool = {"type": "tool_use", "id": "toolu_fake1", "name": "python", "input": {}}
    frames = [
        message_start(),
        *text_block(0, "I'll run it."),
        block_start(1, tool),
        block_delta(1, {"type": "input_json_delta", "partial_json": ""}),
        block_delta(1, {"type": "input_json_delta", "partial_json": arguments[:9]}),
        block_delta(1, {"type": "input_json_delta", "partial_json": arguments[9:]}),
        block_stop(1),
        *finish("tool_use", 30),
    ]
    return [stream(frames), text_reply(ANSWER)]


def thinking() -> Scenario:
    half = len(THINKING) // 2
    frames = [
        message_start(),
        block_start(0, {"type": "thinking", "thinking": ""}),
        block_delta(0, {"type": "thinking_delta", "thinking": THINKING[:half]}),
        block_delta(0, {"type": "thinking_delta", "thinking": THINKING[half:]}),
        block_delta(0, {"type": "signature_delta", "signature": "c2lnbmF0dXJl"}),
        block_stop(0),
        *text_block(1, ANSWER),
        *finish("end_turn", 20),
    ]
    return [stream(frames)]


def error_event() -> Scenario:
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    return [stream([message_start(), *text_block(0, "Partial"), event("error", overloaded)])]


def overloaded_529_then_text() -> Scenario:
    return [error(529, "overloaded_error", "Overloaded"), text_reply()]


def unauthorized() -> Scenario:
    return [error(401, "authentication_error", "invalid x-api-key")]


SCENARIOS: Registry = {
    "text": text,
    "tool_use": tool_use,
    "thinking": thinking,
    "error_event": error_event,
    "overloaded_529_then_text": overloaded_529_then_text,
    "unauthorized": unauthorized,
}


class FakeAnthropic(FakeServer):
    """A fake Anthropic Messages API server; ``base_url`` has no path."""

    registry: ClassVar[Registry] = SCENARIOS
    prefix = ""


if __name__ == "__main__":
    main(FakeAnthropic)
