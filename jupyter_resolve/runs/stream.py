"""An ordered, logged stream of events that several clients can watch (runs and tasks)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from ..contracts.bodies import Event
from ..contracts.errors import RunLogError
from .log import RunLog


class EventStream:
    """Events get a sequence from 1, go to the log, then to every watcher."""

    final_event = "run.completed"

    def __init__(self, log: RunLog | None) -> None:
        self.events: list[Event] = []
        self._log = log
        self._changed = asyncio.Event()
        self._closed = False
        self.dropped = 0  # events that came after the final one

    @property
    def closed(self) -> bool:
        return self._closed

    def append(self, event_type: str, data: dict[str, Any]) -> Event | None:
        """Log, then keep, then wake the watchers. If the log cannot be written (a full disk),
        the stream goes on for its watchers, saying once — before this event — that it is no
        longer saved.

        Nothing follows the final event (DESIGN 3.6): an event that comes after it (a tool the
        run's end could not stop in time) is dropped — not kept, not logged, not sent — and
        None is returned."""
        if self._closed:
            self.dropped += 1
            return None
        if self._log is not None:
            try:
                self._log.append(self._event(event_type, data))
            except RunLogError as exc:
                self._log.close()
                self._log = None
                ids = {k: v for k, v in data.items() if k in ("run_id", "task_id")}
                message = f"{exc}; this run goes on but is no longer saved"
                self._keep("run.error", {**ids, "code": "run_log_unwritable", "message": message})
        event = self._keep(event_type, data)
        if event_type == self.final_event:
            self._closed = True
            if self._log is not None:
                self._log.close()
        self._changed.set()
        self._changed = asyncio.Event()
        return event

    def _event(self, event_type: str, data: dict[str, Any]) -> Event:
        return Event.model_construct(seq=len(self.events) + 1, type=event_type, data=data)

    def _keep(self, event_type: str, data: dict[str, Any]) -> Event:
        event = self._event(event_type, data)
        self.events.append(event)
        return event

    async def watch(self, after: int = 0, idle: float | None = None) -> AsyncIterator[Event | None]:
        """Stored events after ``after``, then live ones until the final event.

        Yields None after ``idle`` seconds without an event (the caller writes a keep-alive).
        """
        position = max(after, 0)
        while True:
            while position < len(self.events):
                event = self.events[position]
                position += 1
                yield event
            if self._closed:
                return
            changed = self._changed
            try:
                await asyncio.wait_for(changed.wait(), idle)
            except asyncio.TimeoutError:
                yield None
