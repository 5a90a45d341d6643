"""Flushing a stream of small writes in bursts, without delaying the first ones."""

from __future__ import annotations

import asyncio

from tornado import web
from tornado.iostream import StreamClosedError


class BurstFlusher:
    """Flushes what a handler wrote once the loop comes round, not after every write.

    A provider that hands over many chunks at once (one network read, the scripted model) then
    costs one send to the runtime instead of one per chunk — the runtime reads them in one go
    and the gateway reads its frames back in fewer, larger reads. A provider that waits between
    chunks lets the loop come round, so each chunk still goes out at once. The first chunks are
    flushed one by one and the writer yields after each of the first ``CAREFUL``, so the first
    token does not wait behind a burst; after that it yields every ``BURST`` chunks, so a long
    burst neither starves the loop nor piles up unsent.
    """

    EAGER = 4
    CAREFUL = 64
    BURST = 32

    def __init__(self, handler: web.RequestHandler) -> None:
        self._handler = handler
        self._scheduled: asyncio.Handle | None = None
        self._written = 0
        self._unyielded = 0
        self.closed = False  # the peer went away: a flush failed

    async def wrote(self) -> None:
        """Call after each write; check :attr:`closed` after it."""
        self._written += 1
        if self._written <= self.EAGER:
            try:
                await self._handler.flush()
            except StreamClosedError:
                self.closed = True
            await asyncio.sleep(0)
            return
        if self._scheduled is None:
            self._scheduled = asyncio.get_running_loop().call_soon(self._flush)
        self._unyielded += 1
        if self._unyielded >= (1 if self._written <= self.CAREFUL else self.BURST):
            self._unyielded = 0
            await asyncio.sleep(0)

    def cancel(self) -> None:
        """Drop a scheduled flush (before ``finish()``, which sends everything itself)."""
        if self._scheduled is not None:
            self._scheduled.cancel()
            self._scheduled = None

    def _flush(self) -> None:
        self._scheduled = None
        if self.closed:
            return
        try:
            future = self._handler.flush()
        except StreamClosedError:
            self.closed = True
            return
        future.add_done_callback(self._flushed)

    def _flushed(self, future: asyncio.Future[None]) -> None:
        if future.cancelled() or future.exception() is not None:
            self.closed = True
