"""A running call's live output as ``tool.output`` events (DESIGN 3.6).

What the scratch kernel prints and displays while a call runs reaches the run's clients as it
comes, through the run's append-then-send path (so it is logged and replayed like any event),
always before the call's ``tool.completed``, which still carries the whole result.

Coalesced: pieces are held for at most ``FLUSH_SECONDS`` (or until ``FLUSH_CHARS`` of text wait)
and sent as one batch, consecutive text of one stream merged into one event, so a tight print
loop makes a few events, not thousands. Bounded per call: at most ``MAX_EVENTS`` events and
``MAX_TEXT`` characters of text (the result's own bound, DESIGN 3.3), displays at most
``MAX_DISPLAY_CHARS`` characters of MIME data in all; past a bound one last event says the live
output stops there, and nothing more of the call is sent until its ``tool.completed``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from kernel_tools.result import OUTPUT_LIMIT

from ..contracts.bodies import EventType
from ..scratch.iopub import KernelOutput
from ..tools.kernel import RICH_TYPES

FLUSH_SECONDS = 0.1
FLUSH_CHARS = 4096
MAX_EVENTS = 100  # the marker included
MAX_TEXT = OUTPUT_LIMIT
MAX_DISPLAY_CHARS = 500_000  # an image or two; more is in tool.completed
MARKER = (
    "\n[live output stops here: at most {events} events and {chars:,} characters are shown "
    "while a call runs; its result comes with tool.completed]\n"
)

Emit = Callable[[list[tuple[EventType, dict[str, Any]]]], None]
"""Appends a batch of ``(type, data)`` events to the run (``Run.emit_all``)."""


class LiveOutput:
    """The live output of one call: :meth:`add` each piece, :meth:`close` when it ends."""

    def __init__(self, emit: Emit, call_id: str) -> None:
        self.emit = emit
        self.call_id = call_id
        self.pending: list[dict[str, Any]] = []
        self.pending_chars = 0
        self.events = 0  # made so far, sent or pending
        self.chars = 0  # of text, sent or pending
        self.display_chars = 0
        self.stopped = False
        self._timer: asyncio.TimerHandle | None = None

    def add(self, output: KernelOutput) -> None:
        """One piece of output, sent within ``FLUSH_SECONDS`` (at once past ``FLUSH_CHARS``)."""
        if self.stopped:
            return
        if output.stream == "display":
            self._add_display(output)
        elif output.text:
            self._add_text(output.stream, output.text)
        if self.pending_chars >= FLUSH_CHARS or self.stopped:
            self.flush()
        elif self.pending and self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(FLUSH_SECONDS, self.flush)

    def flush(self) -> None:
        """Send what waits, as one batch."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self.pending:
            batch, self.pending, self.pending_chars = self.pending, [], 0
            self.emit([("tool.output", data) for data in batch])

    def close(self) -> None:
        """The call ended (or was stopped): send what waits; nothing more is taken."""
        self.flush()
        self.stopped = True

    def _add_text(self, stream: str, text: str) -> None:
        room = MAX_TEXT - self.chars
        shown = text[:room]
        last = self.pending[-1] if self.pending else None
        if shown and last is not None and last["stream"] == stream and "mime" not in last:
            last["text"] += shown
        elif shown:
            if not self._new_event(stream):
                return
            self.pending.append({"call_id": self.call_id, "stream": stream, "text": shown})
        self.chars += len(shown)
        self.pending_chars += len(shown)
        if len(shown) < len(text):
            self._stop(stream)

    def _add_display(self, output: KernelOutput) -> None:
        data = output.data or {}
        mime = {kind: data[kind] for kind in RICH_TYPES if kind in data}
        if not mime:
            return
        size = sum(len(v) if isinstance(v, str) else len(json.dumps(v)) for v in mime.values())
        if not self._new_event("display"):
            return
        event: dict[str, Any] = {"call_id": self.call_id, "stream": "display"}
        if self.display_chars + size <= MAX_DISPLAY_CHARS:
            self.display_chars += size
            event["mime"] = mime
        else:  # too big to show live: said, and the call's result has it
            kinds = ", ".join(mime)
            event["text"] = f"[a display ({kinds}, {size:,} characters) is not shown live]"
        if output.display_id:
            event["display_id"] = output.display_id
        self.pending.append(event)

    def _new_event(self, stream: str) -> bool:
        """Count one more event; False (and the marker) when only the marker's place is left."""
        if self.events >= MAX_EVENTS - 1:
            self._stop(stream)
            return False
        self.events += 1
        return True

    def _stop(self, stream: str) -> None:
        if self.stopped:
            return
        self.stopped = True
        self.events += 1
        text = MARKER.format(events=MAX_EVENTS, chars=MAX_TEXT)
        self.pending.append({"call_id": self.call_id, "stream": stream, "text": text})


__all__ = ["MAX_DISPLAY_CHARS", "MAX_EVENTS", "MAX_TEXT", "LiveOutput"]
