"""An ordered, logged stream of events that several clients can watch (runs and tasks)."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from ..contracts.bodies import Event
from ..contracts.errors import RunLogError
from .log import RunLog

log = logging.getLogger(__name__)

Sink = Callable[[list[Event]], bool]
"""Takes each batch of new events as it is appended; returns False to stop taking them."""


def encode(data: dict[str, Any]) -> str:
    """An event's data as JSON: encoded once, for the log line and every client's frame."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


class EventStream:
    """Events get a sequence from 1, go to the log, then to every sink and watcher.

    A sink (:meth:`subscribe`) is called with each batch as it is appended, before anything
    else runs: an SSE stream writes it to its client straight away. A watcher (:meth:`watch`)
    is a coroutine woken once per batch. Under a provider's flood of chunks every turn of the
    event loop is long, so how many turns an event waits for decides when its client sees it.
    """

    final_event = "run.completed"

    def __init__(self, log: RunLog | None) -> None:
        self.events: list[Event] = []
        # each event's data as JSON, encoded when it was appended (None: read from a log)
        self._payloads: list[str | None] = []
        self._log = log
        self._waiters: set[asyncio.Future[bool]] = set()
        self._sinks: list[Sink] = []
        self._closed = False
        self.dropped = 0  # events that came after the final one

    @property
    def closed(self) -> bool:
        return self._closed

    def append(self, event_type: str, data: dict[str, Any]) -> Event | None:
        """Log, then keep, then wake the watchers (see :meth:`append_many`). Returns the event,
        or None when it came after the final one and was dropped."""
        kept = self.append_many([(event_type, data)])
        return kept[-1] if kept else None

    def append_many(self, items: Sequence[tuple[str, dict[str, Any]]]) -> list[Event]:
        """Log a batch of events in one write, then keep them, then wake the watchers once.

        If the log cannot be written (a full disk), the stream goes on for its watchers,
        saying once — before these events — that it is no longer saved. Nothing follows the
        final event (DESIGN 3.6): what comes after it (a tool the run's end could not stop in
        time) is dropped — not kept, not logged, not sent."""
        batch: list[tuple[str, dict[str, Any], str | None]] = []
        logged = self._log is not None  # else encoded when first sent (a replay from a log)
        for event_type, data in items:
            if self._closed:
                self.dropped += 1
                continue
            batch.append((event_type, data, encode(data) if logged else None))
            if event_type == self.final_event:
                self._closed = True
        if not batch:
            return []
        if self._log is not None:
            first = len(self.events) + 1
            try:
                self._log.append_lines(
                    (first + i, kind, payload or encode(data))
                    for i, (kind, data, payload) in enumerate(batch)
                )
            except RunLogError as exc:
                self._log.close()
                self._log = None
                data = batch[0][1]
                ids = {k: v for k, v in data.items() if k in ("run_id", "task_id")}
                message = f"{exc}; this run goes on but is no longer saved"
                error = {**ids, "code": "run_log_unwritable", "message": message}
                batch.insert(0, ("run.error", error, encode(error)))
        kept = [self._keep(kind, data, payload) for kind, data, payload in batch]
        if self._closed and self._log is not None:
            self._log.close()
        for sink in list(self._sinks):  # a copy: a sink may unsubscribe another meanwhile
            if not self._deliver(sink, kept) and sink in self._sinks:
                self._sinks.remove(sink)
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(True)
        self._waiters.clear()
        return kept

    def subscribe(self, sink: Sink) -> Callable[[], None]:
        """Call ``sink`` with every batch appended from now on, until it returns False or the
        returned function is called. The events already here are the caller's to send."""
        self._sinks.append(sink)

        def unsubscribe() -> None:
            if sink in self._sinks:
                self._sinks.remove(sink)

        return unsubscribe

    def after_next_batch(self, work: Callable[[], object]) -> None:
        """Run ``work`` on the event loop once the next batch has reached every sink (the
        clients' streams): for what a run's start can leave until its first output is on its
        way (its index row, its audit event; issue 47)."""

        def next_batch(events: list[Event]) -> bool:
            asyncio.get_running_loop().call_soon(work)  # after this append's sinks
            return False

        self.subscribe(next_batch)

    @staticmethod
    def _deliver(sink: Sink, events: list[Event]) -> bool:
        try:
            return sink(events)
        except Exception:  # one client's broken sink must not stop the run or the others
            log.exception("an event sink failed; it gets no more events")
            return False

    def _keep(self, event_type: str, data: dict[str, Any], payload: str | None) -> Event:
        event = Event.model_construct(seq=len(self.events) + 1, type=event_type, data=data)
        self.events.append(event)
        self._payloads.append(payload)
        return event

    def payload(self, event: Event) -> str:
        """The event's data as JSON (encoded once)."""
        index = event.seq - 1
        if 0 <= index < len(self._payloads) and self.events[index] is event:
            payload = self._payloads[index]
            if payload is None:
                payload = self._payloads[index] = encode(event.data)
            return payload
        return encode(event.data)

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
            if not await self.wait(idle):
                yield None

    async def wait(self, idle: float | None = None) -> bool:
        """Until the next batch is appended (True), or ``idle`` seconds pass (False).

        Each waiter has a future of its own, resolved by :meth:`append_many`: the waiting task
        runs in the loop's next turn (``asyncio.wait_for`` on an ``asyncio.Event`` took three).
        """
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[bool] = loop.create_future()
        self._waiters.add(waiter)
        timer = None if idle is None else loop.call_later(idle, _expire, waiter)
        try:
            return await waiter
        finally:
            self._waiters.discard(waiter)
            if timer is not None:
                timer.cancel()


def _expire(waiter: asyncio.Future[bool]) -> None:
    if not waiter.done():
        waiter.set_result(False)
