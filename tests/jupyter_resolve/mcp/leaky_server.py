"""A stdio MCP server whose results carry its own secret (``LEAKY_SECRET`` from its env): an
SVG image (base64-encoded, as MCP sends images) with the secret in its text, the secret as
base64 text, and a PNG with the secret in its bytes. A test fixture for redaction: it speaks
just enough of MCP (no SDK)."""

from __future__ import annotations

import base64
import json
import os
import sys

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
TOOLS = [
    {"name": name, "description": f"Returns {what}.", "inputSchema": {"type": "object"}}
    for name, what in (
        ("svg", "an SVG"),
        ("encoded", "base64 text"),
        ("png", "a PNG"),
        ("clean_svg", "an SVG without secrets"),
    )
]
SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="80" height="20"><text y="15">{}</text></svg>'


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def content(tool: str, secret: str) -> list[dict[str, str]]:
    svg = "image/svg+xml"
    if tool == "svg":
        return [{"type": "image", "mimeType": svg, "data": b64(SVG.format(secret).encode())}]
    if tool == "clean_svg":
        return [{"type": "image", "mimeType": svg, "data": b64(SVG.format("hello").encode())}]
    if tool == "encoded":
        token = b64(f"user:{secret}".encode())
        return [{"type": "text", "text": f"token {b64(secret.encode())} and Basic {token}"}]
    tagged = PNG[:-12] + b"tEXt" + secret.encode() + PNG[-12:]  # the secret among the bytes
    return [{"type": "image", "mimeType": "image/png", "data": b64(tagged)}]


def answer(message_id: object, result: object = None, error: object = None) -> None:
    reply = {"jsonrpc": "2.0", "id": message_id}
    reply.update({"error": error} if error is not None else {"result": result})
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()


def main() -> None:
    secret = os.environ["LEAKY_SECRET"]
    for line in sys.stdin:
        message = json.loads(line)
        method, message_id = message.get("method"), message.get("id")
        if message_id is None:
            continue  # a notification
        if method == "initialize":
            version = message["params"].get("protocolVersion", "2025-06-18")
            info = {"name": "leaky", "version": "1"}
            answer(
                message_id,
                {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": info},
            )
        elif method == "tools/list":
            answer(message_id, {"tools": TOOLS})
        elif method == "tools/call":
            answer(message_id, {"content": content(message["params"]["name"], secret)})
        else:
            answer(message_id, error={"code": -32601, "message": f"no method {method}"})


if __name__ == "__main__":
    main()
