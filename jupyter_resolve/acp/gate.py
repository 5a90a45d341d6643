"""One caller at a time per agent process (DESIGN 10.4).

An agent's process serves every session, and its requests to this server (``fs/*``,
``terminal/*``, permission requests) name a session by its id, which the agent chooses: while
two people's turns ran at once, a turn of one could read or write as the other's. So the turns
under way on one process are all of one caller (the run's owner and permissions); a turn of
another caller waits until they have ended, and turns wait in order (the first caller waiting
goes next, with every waiting turn of theirs), so nobody is starved. Pure asyncio.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Hashable


class CallerGate:
    """Admits turns of the current caller; another caller's wait (first come, first served)."""

    def __init__(self) -> None:
        self.holder: Hashable | None = None
        self.inside = 0  # turns of the holder under way
        self.waiting: list[tuple[Hashable, asyncio.Future[None]]] = []

    def busy_for(self, caller: Hashable) -> bool:
        """Whether a turn of ``caller`` would wait now."""
        if self.inside == 0:
            return bool(self.waiting)
        return self.holder != caller or bool(self.waiting)

    @contextlib.asynccontextmanager
    async def turn(self, caller: Hashable) -> AsyncIterator[None]:
        """Hold the process for ``caller`` while the block runs (waiting first if needed)."""
        if not self.busy_for(caller):
            self.holder, self.inside = caller, self.inside + 1
        else:
            admitted: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self.waiting.append((caller, admitted))
            try:
                await admitted  # :meth:`_leave` counted this turn in before waking it
            except asyncio.CancelledError:
                if admitted.done() and not admitted.cancelled():
                    self._leave()  # admitted and cancelled at once: give the place back
                else:
                    self.waiting = [(c, f) for c, f in self.waiting if f is not admitted]
                    self._admit()  # the head may have been this one
                raise
        try:
            yield
        finally:
            self._leave()

    def _leave(self) -> None:
        self.inside -= 1
        if self.inside == 0:
            self.holder = None
            self._admit()

    def _admit(self) -> None:
        """When nobody is inside: the first waiting caller, with all their waiting turns."""
        if self.inside or not self.waiting:
            return
        caller = self.waiting[0][0]
        kept = []
        for who, future in self.waiting:
            if who == caller and not future.done():
                future.set_result(None)
                self.inside += 1
            elif not future.done():
                kept.append((who, future))
        self.waiting = kept
        self.holder = caller if self.inside else None
