"""SSE framing (pure): normalized events out, and a reader of ``data:`` lines in."""

from __future__ import annotations

import json
from typing import Any

KEEPALIVE = b": keep-alive\n\n"

SSE_HEADERS = {
    "Content-Type": "text/event-stream; charset=utf-8",
    "Cache-Control": "no-cache",
    "X-Accel-Buffering": "no",
}


def format_event(seq: int, event_type: str, data: dict[str, Any]) -> bytes:
    """One frame: ``id: SEQ\\nevent: TYPE\\ndata: JSON\\n\\n``."""
    payload = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return f"id: {seq}\nevent: {event_type}\ndata: {payload}\n\n".encode()


def format_data(data: dict[str, Any] | str) -> bytes:
    """A bare ``data:`` frame (OpenAI-style streams)."""
    text = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    return f"data: {text}\n\n".encode()


def data_payload(line: str) -> str | None:
    """The payload of a ``data:`` line (with or without the space), else None."""
    if not line.startswith("data:"):
        return None
    payload = line[5:]
    return payload[1:] if payload.startswith(" ") else payload
