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

from ..contracts.sse import SSEDecoder, SSEEvent

# What the gateway must see in an event (a false alarm only costs the slow way)
NEEDS_GATEWAY = re.compile(
    rb'"(?:tool_calls|error|thinking_blocks)"|"usage"\s*:\s*\{|\[DONE\]|\n(?!\n|data: \{)'
)
EVENT_START = b"data: {"
MAX_EVENT = 16 * 1024 * 1024  # bytes of one event still without its end (agent-httpd's cap too)


class EventTooLarge(ValueError):
    """The provider sent more than MAX_EVENT bytes without ending an event."""


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
        if block.startswith(EVENT_START) and NEEDS_GATEWAY.search(block, 0, end) is None:
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
                and NEEDS_GATEWAY.search(event) is None
                and b"\n" not in event
            ):
                out.append(event + b"\n\n")
            else:
                out.extend(self._decoder.feed(event + b"\n\n"))
        return out
