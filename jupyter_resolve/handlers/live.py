"""A client's SSE stream of a run's (or a task's) events, written as they are appended.

The events already there go out in one write. After that the stream is a sink of the run
(:meth:`EventStream.subscribe`): each batch the run appends is written to the client at once,
inside the append, not in some later turn of the event loop. While a provider floods the gateway
with chunks every turn of the loop is long, and a watcher woken per batch made the first token
wait several of them.

A client that reads slower than the run writes would have the whole run pile up in the
connection's buffer, so past ``LAG_BYTES`` unsent the stream stops taking batches and catches
up from the run's event list instead, one flushed batch at a time, as it did before.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Protocol

from tornado import web
from tornado.iostream import StreamClosedError

from ..contracts.bodies import Event
from ..contracts.sse import KEEPALIVE, format_event
from .streaming import SSEWriter

LAG_BYTES = 4 * 1024 * 1024


class EventSource(Protocol):
    """What a stream reads of a run or a task (``runs/stream.py``'s ``EventStream``)."""

    events: list[Event]

    @property
    def closed(self) -> bool: ...

    def payload(self, event: Event) -> str: ...

    def subscribe(self, sink: Callable[[Sequence[Event]], bool]) -> Callable[[], None]: ...

    def watch(self, after: int = 0, idle: float | None = None) -> AsyncIterator[Event | None]: ...


class LiveEvents:
    """Writes ``stream``'s events after ``after`` to ``handler`` until the final one."""

    def __init__(self, handler: web.RequestHandler, stream: EventSource, after: int) -> None:
        self.handler = handler
        self.stream = stream
        self.sse = SSEWriter(handler)
        self.position = max(after, 0)
        self.unsent = 0  # bytes handed to the connection and not yet on the socket
        self.writes = 0
        self.lagging = False
        self.broken = False  # the client went away
        self._over: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    async def run(self, keepalive: float | None) -> None:
        self.sse.start()
        self.take(self.stream.events[self.position :], initial=True)
        if not self._ended():
            unsubscribe = self.stream.subscribe(self.take)
            try:
                await self._until_over(keepalive)
            finally:
                unsubscribe()
        if self.lagging and not self.broken:
            await self._catch_up(keepalive)
        if not self.broken:
            self.sse.finish()

    def take(self, events: Sequence[Event], initial: bool = False) -> bool:
        """Write a batch (a sink of the stream: False once the stream needs no more)."""
        if self._over.done():
            return False
        new = [event for event in events if event.seq > self.position]
        if new or initial:
            frames = b"".join(
                format_event(event.seq, event.type, self.stream.payload(event)) for event in new
            )
            if new:
                self.position = new[-1].seq
            self._write(frames)  # with nothing yet, the headers go now, on their own
        if self._ended():
            self._finish()
        elif self.unsent > LAG_BYTES:
            self.lagging = True
            self._finish()
        return not self._over.done()

    def _ended(self) -> bool:
        return self.broken or (self.stream.closed and self.position >= len(self.stream.events))

    def _write(self, frames: bytes) -> None:
        if frames:
            self.sse.raw(frames)
        self.writes += 1
        self.unsent += len(frames)
        size = len(frames)
        try:
            future = self.handler.flush()
        except StreamClosedError:
            self.broken = True
            return
        future.add_done_callback(lambda done: self._flushed(done, size))

    def _flushed(self, done: asyncio.Future[None], size: int) -> None:
        self.unsent -= size
        if done.cancelled() or done.exception() is not None:
            self.broken = True
            self._finish()

    def _finish(self) -> None:
        if not self._over.done():
            self._over.set_result(None)

    async def _until_over(self, keepalive: float | None) -> None:
        while not self._over.done():
            writes = self.writes
            await asyncio.wait([self._over], timeout=keepalive or None)
            if not self._over.done() and self.writes == writes:
                self._write(KEEPALIVE)

    async def _catch_up(self, keepalive: float | None) -> None:
        """The slow path: the rest of the events a flushed batch at a time."""
        try:
            await self.handler.flush()
            async for event in self.stream.watch(self.position, idle=keepalive):
                if event is None:
                    self.sse.keepalive()
                else:
                    self.sse.event(event.seq, event.type, self.stream.payload(event))
                    if event.seq < len(self.stream.events):
                        continue  # more events are ready: send them in one write
                await self.handler.flush()
        except StreamClosedError:
            self.broken = True
