"""An incremental Server-Sent Events decoder over bytes (pure: no I/O).

Fed whatever byte pieces the network delivers, it returns the complete events. Lines are split
on bytes (LF, with a trailing CR dropped), so a UTF-8 character split across reads is whole
again before it is decoded. ``id:``, ``retry:`` and ``:`` comment lines are ignored. A
``data: [DONE]`` line is an event at once, even when the server never sends the blank line
after it; :meth:`SSEDecoder.close` flushes an event left open at end of stream.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

DONE = "[DONE]"


@dataclass(frozen=True)
class SSEEvent:
    """One dispatched event: its ``event:`` name ("" when none) and its joined data lines."""

    event: str
    data: str


class SSEDecoder:
    """Feed bytes, get events. Not thread-safe; one per stream."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._data: list[str] = []
        self._event = ""

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
        field, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if field == "data":
            self._data.append(value)
            if value.strip() == DONE and len(self._data) == 1:
                return self._dispatch()
        elif field == "event":
            self._event = value
        return None

    def _dispatch(self) -> SSEEvent | None:
        if not self._data:
            self._event = ""
            return None
        event = SSEEvent(self._event, "\n".join(self._data))
        self._data = []
        self._event = ""
        return event


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
