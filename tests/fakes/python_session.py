"""A fake model for long sessions (tests and bench): each turn calls python once and answers.

:class:`PythonSession` is a ``reply_to`` for :class:`tests.fakes.openai_server.FakeOpenAI`: a
prompt whose last message is the person's gets a python call printing ``output_chars``
characters (a different line each turn), a prompt ending with the tool result gets a short
answer, and a summarization request a short summary. Each reply reports ``prompt_tokens`` as
the characters of the request's tools and messages (compact JSON) / 4, so the gateway's token
estimate is calibrated as with a real model.
"""

from __future__ import annotations

import json
from typing import Any

from jupyter_resolve.contracts.compaction import is_summary_request

from ._server import Reply, Request
from .openai_server import DONE, chunk, sse, stream, text_reply, usage

SUMMARY = "The person asked for the numbers of many turns."


def python_call(call_id: str, code: str, prompt_tokens: int) -> Reply:
    """A streamed assistant turn that calls python with ``code``."""
    call = {
        "index": 0,
        "id": call_id,
        "type": "function",
        "function": {"name": "python", "arguments": json.dumps({"code": code})},
    }
    return stream(
        [
            sse(chunk({"role": "assistant", "content": ""})),
            sse(chunk({"tool_calls": [call]})),
            sse(chunk({}, "tool_calls")),
            sse(usage(prompt=prompt_tokens)),
            DONE,
        ]
    )


class PythonSession:
    """The replies (see the module doc); ``calls`` counts the python calls made."""

    def __init__(self, output_chars: int = 3_000) -> None:
        self.output_chars = output_chars
        self.calls = 0

    def __call__(self, request: Request) -> Reply:
        body: Any = request.body if isinstance(request.body, dict) else {}
        if is_summary_request(body):
            return text_reply(SUMMARY)
        messages = body.get("messages") or [{}]
        if messages[-1].get("role") == "tool":
            return text_reply(f"Done with turn {self.calls}.")
        self.calls += 1
        sent = {"tools": body.get("tools"), "messages": messages}
        prompt_tokens = len(json.dumps(sent, separators=(",", ":"))) // 4
        line = f"t{self.calls:03d} "
        code = f"print({line!r} * {self.output_chars // len(line)})"
        return python_call(f"call_t{self.calls}", code, prompt_tokens)
