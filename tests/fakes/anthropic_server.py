"""A fake Anthropic Messages API server (``POST /v1/messages``, streamed).

In-process: ``async with FakeAnthropic(scenario="tool_use") as fake: fake.base_url``.
As a subprocess (from the repository root)::

    python -m tests.fakes.anthropic_server --port 0 --scenario text   # prints {"port": N}
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from ._server import (
    SSE_HEADERS,
    FakeServer,
    Part,
    Registry,
    Reply,
    Request,
    Scenario,
    json_reply,
    main,
)
from .anthropic_rules import cache_usage, refusal

MODEL = "claude-fake"
TEXT = "Hello from the fake Anthropic server."
ANSWER = "The answer is 42."
TOOL_CODE = "print(6*7)"
THINKING = "Let me think about it."
SIGNATURE = "c2lnbmF0dXJl"
LOOP_THINKING = "The user wants 6*7 computed; I will run it with the python tool."
LOOP_SIGNATURE = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxvcmlnaW5hbC1zaWc="
MODELS = [
    {"type": "model", "id": "claude-fake", "display_name": "Claude Fake"},
    {"type": "model", "id": "claude-sonnet-4-5-20250929", "display_name": "Claude Sonnet 4.5"},
    {"type": "model", "id": "claude-haiku-4-5-20251001", "display_name": "Claude Haiku 4.5"},
]
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
        block_delta(0, {"type": "signature_delta", "signature": SIGNATURE}),
        block_stop(0),
        *text_block(1, ANSWER),
        *finish("end_turn", 20),
    ]
    return [stream(frames)]


def thinking_block(index: int, text: str, signature: str) -> list[bytes]:
    half = len(text) // 2
    return [
        block_start(index, {"type": "thinking", "thinking": ""}),
        block_delta(index, {"type": "thinking_delta", "thinking": text[:half]}),
        block_delta(index, {"type": "thinking_delta", "thinking": text[half:]}),
        block_delta(index, {"type": "signature_delta", "signature": signature[:10]}),
        block_delta(index, {"type": "signature_delta", "signature": signature[10:]}),
        block_stop(index),
    ]


def thinking_tools() -> Scenario:
    """Thinking, then a tool call; after the result, a redacted block and the answer (the
    second request must carry the first turn's thinking block unchanged, or it is a 400)."""
    arguments = json.dumps({"code": TOOL_CODE})
    tool = {"type": "tool_use", "id": "toolu_think1", "name": "python", "input": {}}
    first = [
        message_start(),
        *thinking_block(0, LOOP_THINKING, LOOP_SIGNATURE),
        block_start(1, tool),
        block_delta(1, {"type": "input_json_delta", "partial_json": arguments}),
        block_stop(1),
        *finish("tool_use", 30),
    ]
    redacted = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT"}
    second = [
        message_start(),
        block_start(0, redacted),
        block_stop(0),
        *text_block(1, ANSWER),
        *finish("end_turn", 20),
    ]
    return [stream(first), stream(second)]


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
    "thinking_tools": thinking_tools,
    "error_event": error_event,
    "overloaded_529_then_text": overloaded_529_then_text,
    "unauthorized": unauthorized,
}


def signed_blocks(scenario: Scenario) -> dict[str, str]:
    """Signature -> thinking text of every thinking block the scenario's streams send."""
    signed: dict[str, str] = {}
    for reply in scenario:
        blocks: dict[int, list[str]] = {}
        for part in reply.parts:
            for line in part.data.decode("utf-8", errors="replace").splitlines():
                if not line.startswith("data:"):
                    continue
                try:
                    obj = json.loads(line[5:])
                except ValueError:
                    continue
                index = obj.get("index", 0) if isinstance(obj, dict) else 0
                block = obj.get("content_block") or {} if isinstance(obj, dict) else {}
                delta = obj.get("delta") or {} if isinstance(obj, dict) else {}
                if block.get("type") == "thinking":
                    blocks[index] = [block.get("thinking", ""), block.get("signature", "")]
                elif delta.get("type") == "thinking_delta" and index in blocks:
                    blocks[index][0] += delta["thinking"]
                elif delta.get("type") == "signature_delta" and index in blocks:
                    blocks[index][1] += delta["signature"]
        signed.update({sig: text for text, sig in blocks.values()})
    return signed


class FakeAnthropic(FakeServer):
    """A fake Anthropic Messages API server; ``base_url`` has no path.

    It refuses what the real API refuses (:mod:`.anthropic_rules`), serves ``GET /v1/models``,
    and with ``count_cache`` set reports cache reads and writes the way the API counts them.
    """

    registry: ClassVar[Registry] = SCENARIOS
    prefix = ""

    def __init__(self, scenario: str | Scenario = "text", **kw: Any) -> None:
        super().__init__(scenario, **kw)
        self.signed = signed_blocks(self.scenario)
        self.count_cache = False
        self.cached: set[str] = set()
        self.refusals: list[str] = []

    def answer_directly(self, request: Request) -> Reply | None:
        if request.method == "GET" and request.path.startswith("/v1/models"):
            return json_reply(
                200,
                {
                    "data": MODELS,
                    "has_more": False,
                    "first_id": MODELS[0]["id"],
                    "last_id": MODELS[-1]["id"],
                },
            )
        if request.method == "POST" and request.path == "/v1/messages":
            message = refusal(request.body, self.signed)
            if message is not None:
                self.refusals.append(message)
                return error(400, "invalid_request_error", message)
        return None

    def respond(self, request: Request, reply: Reply) -> Reply:
        if not self.count_cache or not isinstance(request.body, dict):
            return reply
        usage = cache_usage(request.body, self.cached)
        parts = []
        for part in reply.parts:
            if part.data.startswith(b"event: message_start"):
                obj = json.loads(part.data.split(b"data: ", 1)[1])
                obj["message"]["usage"] = {**usage, "output_tokens": 1}
                part = Part(event("message_start", obj), part.delay)
            parts.append(part)
        return Reply(reply.status, reply.headers, parts, reply.transfer, reply.hang)


if __name__ == "__main__":
    main(FakeAnthropic)
