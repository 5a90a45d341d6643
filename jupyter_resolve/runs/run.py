"""One run: its events in order, its log, and the clients watching it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

from ..frames import FrameTranslator
from ..models import CompletionReason, Event, EventType, RunInfo
from .log import RunLog


class Run:
    """Events get a per-run sequence from 1, go to the log, then to every subscriber."""

    def __init__(
        self,
        *,
        run_id: str,
        session_id: str,
        soul: str | None,
        model: str,
        budget: int,
        log: RunLog,
        tool_names: list[str] | None = None,
    ) -> None:
        self.run_id = run_id
        self.session_id = session_id
        self.soul = soul
        self.model = model
        self.budget = budget
        self.tool_names = list(tool_names or [])
        self.started_at = time.time()
        self.events: list[Event] = []
        self.translator = FrameTranslator(budget=budget)
        self.task: asyncio.Task[None] | None = None
        self.cancel_requested = False
        self._log = log
        self._changed = asyncio.Event()

    @property
    def completed(self) -> bool:
        return self.translator.completed

    @property
    def reason(self) -> CompletionReason | None:
        last = self.events[-1] if self.events else None
        if last is not None and last.type == "run.completed":
            reason: CompletionReason = last.data["reason"]
            return reason
        return None

    def emit(self, event_type: EventType, data: dict[str, Any]) -> Event:
        """Append one event: sequence, log, then wake the watchers."""
        event = Event(
            seq=len(self.events) + 1, type=event_type, data={"run_id": self.run_id, **data}
        )
        self._log.append(event)
        self.events.append(event)
        if event_type == "run.completed":
            self._log.close()
        self._changed.set()
        self._changed = asyncio.Event()
        return event

    def emit_all(self, emitted: list[tuple[EventType, dict[str, Any]]]) -> None:
        for event_type, data in emitted:
            self.emit(event_type, data)

    async def watch(self, after: int = 0, idle: float | None = None) -> AsyncIterator[Event | None]:
        """Stored events after ``after``, then live ones until ``run.completed``.

        Yields None after ``idle`` seconds without an event (the caller writes a keep-alive).
        """
        position = max(after, 0)
        while True:
            while position < len(self.events):
                event = self.events[position]
                position += 1
                yield event
            if self.completed:
                return
            changed = self._changed
            try:
                await asyncio.wait_for(changed.wait(), idle)
            except asyncio.TimeoutError:
                yield None

    def info(self) -> RunInfo:
        return RunInfo(
            run_id=self.run_id,
            session_id=self.session_id,
            soul=self.soul,
            model=self.model,
            status="completed" if self.completed else "running",
            reason=self.reason,
            started_at=self.started_at,
            events=len(self.events),
        )
