"""Server-Sent Events (pure: no I/O): the frames the gateway writes, and one incremental
decoder for every stream Python reads (the providers', the runtime's, the magics').

Writing: :func:`format_event` (``id:``/``event:``/``data:``, the public API's event streams) and
:func:`format_data` (a bare ``data:`` frame, OpenAI-style streams), with :data:`KEEPALIVE` and
:data:`SSE_HEADERS`.

Reading: :class:`SSEDecoder` is fed whatever byte pieces the network delivers and returns the
complete events. Lines are split on bytes (LF, with a trailing CR dropped), so a UTF-8 character
split across reads is whole again before it is decoded. ``retry:`` and ``:`` comment lines are
ignored; an ``id:`` is kept on its event only. A ``data: [DONE]`` line is an event at once,
even when the server never sends the blank line after it; :meth:`SSEDecoder.close` flushes an
event left open at end of stream.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

DONE = "[DONE]"

KEEPALIVE = b": keep-alive\n\n"

SSE_HEADERS = {
    "Content-Type": "text/event-stream; charset=utf-8",
    "Cache-Control": "no-cache",
    "X-Accel-Buffering": "no",
}


def format_event(seq: int, event_type: str, data: dict[str, Any] | str) -> bytes:
    """One frame: ``id: SEQ\\nevent: TYPE\\ndata: JSON\\n\\n`` (``data`` already encoded, or
    a dict to encode)."""
    payload = (
        data
        if isinstance(data, str)
        else json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    )
    return f"id: {seq}\nevent: {event_type}\ndata: {payload}\n\n".encode()


def format_data(data: dict[str, Any] | str) -> bytes:
    """A bare ``data:`` frame (OpenAI-style streams)."""
    text = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    return f"data: {text}\n\n".encode()


def split_field(line: str) -> tuple[str, bool, str]:
    """One SSE line as (field, had a colon, value without its one leading space)."""
    name, sep, value = line.partition(":")
    return name, bool(sep), value[1:] if value.startswith(" ") else value


def data_payload(line: str) -> str | None:
    """The payload of a ``data:`` line (with or without the space), else None (the decoder's
    rule for one line)."""
    name, colon, value = split_field(line)
    return value if name == "data" and colon else None


@dataclass(frozen=True)
class SSEEvent:
    """One dispatched event: its ``event:`` name ("" when none) and its joined data lines."""

    event: str
    data: str
    id: str | None = field(default=None, compare=False)  # its ``id:`` line, if it had one


class SSEDecoder:
    """Feed bytes, get events. Not thread-safe; one per stream."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._data: list[str] = []
        self._event = ""
        self._id: str | None = None

    def feed(self, piece: bytes) -> list[SSEEvent]:
        """Add bytes; return the events they complete."""
        self._buffer += piece
        events: list[SSEEvent] = []
        while True:
            end = self._buffer.find(b"\n")
            if end < 0:
                break
            line = bytes(self._buffer[:end])
            del self._buffer[: end + 1]
            if line.endswith(b"\r"):
                line = line[:-1]
            event = self._line(line.decode("utf-8", errors="replace"))
            if event is not None:
                events.append(event)
        return events

    def close(self) -> list[SSEEvent]:
        """End of stream: a last unterminated line and an event without its blank line."""
        events: list[SSEEvent] = []
        if self._buffer:
            line = bytes(self._buffer).rstrip(b"\r")
            self._buffer.clear()
            event = self._line(line.decode("utf-8", errors="replace"))
            if event is not None:
                events.append(event)
        event = self._dispatch()
        if event is not None:
            events.append(event)
        return events

    def _line(self, line: str) -> SSEEvent | None:
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None
        field, _, value = split_field(line)
        if field == "data":
            self._data.append(value)
            if value.strip() == DONE and len(self._data) == 1:
                return self._dispatch()
        elif field == "event":
            self._event = value
        elif field == "id":
            self._id = value
        return None

    def _dispatch(self) -> SSEEvent | None:
        data, event_type, event_id = self._data, self._event, self._id
        self._data, self._event, self._id = [], "", None
        if not data:
            return None
        return SSEEvent(event_type, "\n".join(data), event_id)


def parse_data(data: str) -> list[Any]:
    """The JSON values in an event's data.

    Normally one. Some servers end each ``data:`` line with a single newline, so several
    objects arrive as one event; then each line is parsed on its own. Raises ``ValueError``
    when the data is not JSON either way.
    """
    text = data.strip()
    if not text:
        return []
    try:
        return [json.loads(text)]
    except ValueError:
        lines = [line for line in text.split("\n") if line.strip()]
        if len(lines) < 2:
            raise
        return [json.loads(line) for line in lines]
