"""A local OpenAI-compatible model for OpenCode in the tests (streamed chat completions).

``python fake_model.py PORT ROOT``: a title request gets a title; a turn whose last message is a
tool result gets ``done: <result>``; otherwise a user message that says "write" gets a call of
OpenCode's ``write`` tool (``ROOT/from-opencode.txt``), any other a call of its ``read`` tool
(``ROOT/data.txt``).
"""

from __future__ import annotations

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ROOT = sys.argv[2] if len(sys.argv) > 2 else "/tmp"


def reply(messages: list[dict[str, Any]]) -> dict[str, Any]:
    system = str(messages[0].get("content")) if messages else ""
    if "title generator" in system:
        return {"role": "assistant", "content": "A title"}
    if messages and messages[-1].get("role") == "tool":
        return {"role": "assistant", "content": "done: " + str(messages[-1].get("content"))[:300]}
    asked = " ".join(str(m.get("content")) for m in messages if m.get("role") == "user")
    if "write" in asked:
        arguments = {"filePath": f"{ROOT}/from-opencode.txt", "content": "written by opencode"}
        call = {"name": "write", "arguments": json.dumps(arguments)}
    else:
        call = {"name": "read", "arguments": json.dumps({"filePath": f"{ROOT}/data.txt"})}
    return {
        "role": "assistant",
        "tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": call}],
    }


def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    body = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "fake"}
    return f"data: {json.dumps({**body, 'choices': [choice], **extra})}\n\n".encode()


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        return None

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", 0))
        request = json.loads(self.rfile.read(length) or b"{}")
        delta = reply(request.get("messages", []))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        finish = "tool_calls" if "tool_calls" in delta else "stop"
        usage = {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}
        self.wfile.write(chunk(delta) + chunk({}, finish, usage=usage) + b"data: [DONE]\n\n")
        self.wfile.flush()


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
