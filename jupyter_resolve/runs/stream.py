"""An ordered, logged stream of events that several clients can watch (runs and tasks)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from ..models import Event, EventType
from .log import RunLog


class EventStream:
    """Events get a sequence from 1, go to the log, then to every watcher."""

    final_event = "run.completed"

    def __init__(self, log: RunLog | None) -> None:
        self.events: list[Event] = []
        self._log = log
        self._changed = asyncio.Event()
        self._closed = False

    @property
    def closed(self) -> bool:
        return self._closed

    def append(self, event_type: str, data: dict[str, Any]) -> Event:
        event = Event.model_construct(seq=len(self.events) + 1, type=event_type, data=data)
        if self._log is not None:
            self._log.append(event)
        self.events.append(event)
        if event_type == self.final_event:
            self._closed = True
            if self._log is not None:
                self._log.close()
        self._changed.set()
        self._changed = asyncio.Event()
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


__all__ = ["EventStream", "EventType"]
