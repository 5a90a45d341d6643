"""A stdio MCP server that starts, lists one tool, and never answers a call to it.

A test fixture for the tool timeout: it speaks just enough of MCP's initialize handshake (no
SDK), says on stderr what it is doing, and leaves every ``tools/call`` unanswered.
"""

from __future__ import annotations

import json
import sys

TOOL = {
    "name": "wait",
    "description": "Waits forever.",
    "inputSchema": {"type": "object", "properties": {}},
}


def answer(message_id: object, result: object = None, error: object = None) -> None:
    reply = {"jsonrpc": "2.0", "id": message_id}
    reply.update({"error": error} if error is not None else {"result": result})
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        method, message_id = message.get("method"), message.get("id")
        if message_id is None:
            continue  # a notification
        if method == "initialize":
            version = message["params"].get("protocolVersion", "2025-06-18")
            info = {"name": "hanging", "version": "1"}
            answer(
                message_id,
                {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": info},
            )
        elif method == "tools/list":
            answer(message_id, {"tools": [TOOL]})
        elif method == "tools/call":
            sys.stderr.write("hanging server: got a call, never answering it\n")
            sys.stderr.flush()
        else:
            answer(message_id, error={"code": -32601, "message": f"no method {method}"})


if __name__ == "__main__":
    main()
