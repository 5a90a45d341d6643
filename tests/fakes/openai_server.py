"""A fake OpenAI-compatible chat-completions server (``POST /v1/chat/completions``).

In-process::

    async with FakeOpenAI(scenario="tool_call") as fake:
        provider = OpenAIProvider(fake.base_url, "sk-test", "fake-model")
        ...
        fake.requests[0].body["messages"]

As a subprocess (from the repository root)::

    python -m tests.fakes.openai_server --port 0 --scenario long --chunks 2000
    # prints {"port": N}, then serves until killed; base URL http://127.0.0.1:N/v1

Scenarios: see ``SCENARIOS``; each is a function returning a list of replies.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
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

MODEL = "fake-model"
TEXT = "Hello from the fake OpenAI server."
ANSWER = "The answer is 42."
TOOL_CODE = "print(6*7)"
AWKWARD_REASONING = "Thinking é"
AWKWARD_TEXT = "Café 🎉 done"
AWKWARD_ARGUMENTS = json.dumps({"code": "print('héllo')"}, ensure_ascii=False)
DONE = b"data: [DONE]\n\n"
COMPLETION = "numpy as np"  # the answer of /v1/completions and /v1/fim/completions


def sse(obj: Any, *, space: bool = True) -> bytes:
    """One ``data:`` frame."""
    prefix = b"data: " if space else b"data:"
    return prefix + json.dumps(obj, ensure_ascii=False).encode() + b"\n\n"


def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": MODEL,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **extra,
    }


def usage(prompt: int = 12, completion: int = 8, choices: Any = ()) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": MODEL,
        "choices": list(choices) if choices is not None else None,
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
    }


def stream(frames: Sequence[bytes | Part], transfer: str = "chunked") -> Reply:
    return Reply(
        200, list(SSE_HEADERS), [f if isinstance(f, Part) else Part(f) for f in frames], transfer
    )


def error(status: int, message: str, kind: str, code: str | None = None, **kw: Any) -> Reply:
    return json_reply(
        status, {"error": {"message": message, "type": kind, "param": None, "code": code}}, **kw
    )


def text_reply(text: str = TEXT) -> Reply:
    words = text.split(" ")
    pieces = [words[0]] + [" " + w for w in words[1:]]
    return stream(
        [sse(chunk({"role": "assistant", "content": ""}))]
        + [sse(chunk({"content": p})) for p in pieces]
        + [sse(chunk({}, "stop")), sse(usage()), DONE]
    )


def text() -> Scenario:
    return [text_reply()]


def tool_call() -> Scenario:
    arguments = json.dumps({"code": TOOL_CODE})
    first = {
        "index": 0,
        "id": "call_fake1",
        "type": "function",
        "function": {"name": "python", "arguments": ""},
    }
    pieces = [arguments[:8], arguments[8:18], arguments[18:]]
    call = stream(
        [
            sse(chunk({"role": "assistant", "content": ""})),
            sse(chunk({"content": "Let me compute that."})),
            sse(chunk({"tool_calls": [first]})),
        ]
        + [sse(chunk({"tool_calls": [{"index": 0, "function": {"arguments": p}}]})) for p in pieces]
        + [sse(chunk({}, "tool_calls")), sse(usage()), DONE]
    )
    return [call, text_reply(ANSWER)]


def _split(frame: bytes, char: str, keep: int) -> list[Part]:
    """``frame`` in two TCP writes, cut after ``keep`` bytes of ``char``'s UTF-8 encoding."""
    at = frame.index(char.encode()) + keep
    return [Part(frame[:at]), Part(frame[at:], delay=0.02)]


def awkward() -> Scenario:
    call = {
        "index": 0,
        "id": "call_awk",
        "type": "function",
        "function": {"name": "python", "arguments": ""},
    }
    frames: list[bytes | Part] = [
        b": a comment line\r\n\r\n",
        b"event: message\nid: 1\n" + sse(chunk({"role": "assistant", "content": ""}), space=False),
        sse(chunk({"reasoning": AWKWARD_REASONING}), space=False).replace(b"\n\n", b"\r\n\r\n"),
        *_split(sse(chunk({"content": "Café"})), "é", 1),
        *_split(sse(chunk({"content": " 🎉"})), "🎉", 2),
        sse(chunk({"content": " done"})),
        sse(chunk({"tool_calls": [call]})),
    ]
    frames += [
        sse(chunk({"tool_calls": [{"index": 0, "function": {"arguments": c}}]}), space=False)
        for c in AWKWARD_ARGUMENTS
    ]
    frames += [
        sse(chunk({}, "tool_calls")),
        sse(usage(choices=[])),
        sse(usage(choices=None)),
        b"data: [DONE]",
    ]
    return [stream(frames)]


def midstream_error() -> Scenario:
    return [
        stream(
            [
                sse(chunk({"role": "assistant", "content": ""})),
                sse(chunk({"content": "Partial"})),
                sse(
                    {"error": {"message": "The model crashed mid-answer.", "type": "server_error"}}
                ),
            ]
        )
    ]


def flaky_500() -> Scenario:
    failure = error(500, "The server had an error while processing your request.", "server_error")
    return [failure, text_reply()]


def rate_limited() -> Scenario:
    limit = error(
        429, "Rate limit reached for requests.", "requests", headers=[("Retry-After", "1")]
    )
    return [limit, text_reply()]


def unauthorized() -> Scenario:
    return [
        error(
            401,
            "Incorrect API key provided. You can find your API key in your account settings.",
            "invalid_request_error",
            "invalid_api_key",
        )
    ]


def model_not_found() -> Scenario:
    return [
        error(
            404,
            "The model `nope` does not exist or you do not have access to it.",
            "invalid_request_error",
            "model_not_found",
        )
    ]


def hang() -> Scenario:
    return [Reply(hang=True)]


def long(chunks: int = 200, pace: float = 0.0) -> Scenario:
    """``chunks`` text pieces ``tok0 tok1 …``; with ``pace``, each written that many seconds
    after the one before (a model streaming steadily, as views must show it)."""
    frames: list[bytes | Part] = [sse(chunk({"role": "assistant", "content": ""}))]
    frames += [Part(sse(chunk({"content": f"tok{i} "})), delay=pace) for i in range(chunks)]
    frames += [sse(chunk({}, "stop")), sse(usage(completion=chunks)), DONE]
    return [stream(frames)]


def parallel_ollama() -> Scenario:
    def call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        function = {"name": name, "arguments": json.dumps(arguments)}
        return {"id": call_id, "index": 0, "type": "function", "function": function}

    return [
        stream(
            [
                sse(chunk({"role": "assistant", "content": ""})),
                sse(chunk({"tool_calls": [call("call_a", "python", {"code": "1+1"})]})),
                sse(chunk({"tool_calls": [call("call_b", "read_file", {"path": "a.txt"})]})),
                sse(chunk({}, "stop")),
                sse(usage()),
                DONE,
            ],
            transfer="close",
        ),
        text_reply(ANSWER),
    ]


SCENARIOS: Registry = {
    "text": text,
    "tool_call": tool_call,
    "awkward": awkward,
    "midstream_error": midstream_error,
    "flaky_500": flaky_500,
    "rate_limited": rate_limited,
    "unauthorized": unauthorized,
    "model_not_found": model_not_found,
    "hang": hang,
    "long": long,
    "parallel_ollama": parallel_ollama,
}


class FakeOpenAI(FakeServer):
    """A fake OpenAI-compatible server; ``base_url`` ends in ``/v1``."""

    registry: ClassVar[Registry] = SCENARIOS
    prefix = "/v1"

    def answer_directly(self, request: Request) -> Reply | None:
        """The legacy and FIM completion endpoints (inline completion, issue 35) answer one
        JSON completion, unless ``reply_to`` answers every request."""
        completion_paths = ("/v1/completions", "/v1/fim/completions")
        if self.reply_to is None and request.path in completion_paths:
            usage = {"prompt_tokens": 12, "completion_tokens": 3}
            return json_reply(200, {"choices": [{"text": COMPLETION}], "usage": usage})
        return None


if __name__ == "__main__":
    main(FakeOpenAI)
