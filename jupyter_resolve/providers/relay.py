"""Relaying an OpenAI-compatible provider's stream to the runtime as it came (pure: no I/O).

agent-httpd reads OpenAI's chunk format itself, quirks included (native/agent-httpd/src/
stream.c: ``reasoning``, Ollama's call indexes, ``usage``, in-stream errors), so most events
need nothing from the gateway: their bytes go on untouched, several in one write. An event
goes the slow way — parsed, normalized, watched, written again — only when the gateway has
something to do with it: a tool call (its wire name maps back), usage (cost and cache counts
are noted on the side), thinking blocks, an error, ``[DONE]``, or any shape but one
``data: {...}`` line.
"""

from __future__ import annotations

import re

from ..contracts.errors import ResolveError
from ..contracts.sse import SSEDecoder, SSEEvent

# What the gateway must see in an event (a false alarm only costs the slow way): words found
# by plain substring search, usage only when it is an object. Relaying a 2,000-chunk stream
# took 3.5 ms of CPU with one regex for all of it (tried at every quote), 1.2 ms this way.
NEEDS_GATEWAY_WORDS = (b'"tool_calls"', b'"error"', b'"thinking_blocks"', b"[DONE]")
USAGE = b'"usage"'
USAGE_OBJECT = re.compile(rb'"usage"\s*:\s*\{')
OTHER_LINE = re.compile(rb"\n(?!\n|data: \{)")  # a line that is not one `data: {` event's
EVENT_START = b"data: {"
MAX_EVENT = 16 * 1024 * 1024  # bytes of one event still without its end (agent-httpd's cap too)


class EventTooLarge(ResolveError, ValueError):
    """The provider sent more than MAX_EVENT bytes without ending an event."""

    code = "event_too_large"


class SSERelay:
    """Feed the provider's byte pieces; get bytes to forward as they are, and the events
    the gateway must handle itself, in stream order."""

    def __init__(self) -> None:
        self._rest = b""
        self._decoder = SSEDecoder()
        self._crlf = False  # a stream with CR in its line ends is decoded throughout

    def feed(self, piece: bytes) -> list[bytes | SSEEvent]:
        data = self._rest + piece if self._rest else piece
        if self._crlf or b"\r" in data:
            self._crlf, self._rest = True, b""
            return list(self._decoder.feed(data))
        end = data.rfind(b"\n\n")
        if end < 0:
            if len(data) > MAX_EVENT:
                raise EventTooLarge(f"an event of more than {MAX_EVENT >> 20} MiB")
            self._rest = data
            return []
        if len(data) - end > MAX_EVENT:
            raise EventTooLarge(f"an event of more than {MAX_EVENT >> 20} MiB")
        self._rest = data[end + 2 :]
        block = data[: end + 2]
        if block.startswith(EVENT_START) and not needs_gateway(block, end):
            return [block]  # whole `data: {...}` events only: forward them in one piece
        return self._split(block)

    def close(self) -> list[bytes | SSEEvent]:
        """End of stream: what was left without its blank line goes the slow way."""
        rest, self._rest = self._rest, b""
        return [*self._decoder.feed(rest), *self._decoder.close()] if rest else []

    def _split(self, block: bytes) -> list[bytes | SSEEvent]:
        """A block with something for the gateway: its plain events still go on as bytes."""
        out: list[bytes | SSEEvent] = []
        for event in block[:-2].split(b"\n\n"):
            if (
                event.startswith(EVENT_START)
                and not needs_gateway(event, len(event))
                and b"\n" not in event
            ):
                out.append(event + b"\n\n")
            else:
                out.extend(self._decoder.feed(event + b"\n\n"))
        return out


def needs_gateway(data: bytes, end: int) -> bool:
    """Whether ``data[:end]`` holds anything the gateway must handle itself (see above)."""
    if any(data.find(word, 0, end) >= 0 for word in NEEDS_GATEWAY_WORDS):
        return True
    at = data.find(USAGE, 0, end)
    while at >= 0:
        if USAGE_OBJECT.match(data, at, end):
            return True
        at = data.find(USAGE, at + 1, end)
    return OTHER_LINE.search(data, 0, end) is not None
