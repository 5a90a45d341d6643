"""A supervised session with a peer an SDK speaks to: the life cycle that the external agents
(ACP, ``acp/agents.py``) and the MCP servers (``mcp/connections.py``) share.

The peer starts on first need (:meth:`SupervisedSession.ensure`, under a lock: one start at a
time, a dead one started again) and must be ready within a start timeout. It lives in a task of
its own that holds the SDK's context open until a stop event (the SDK's context must be left by
the task that entered it); callers use the session from theirs. A peer that fails to start or
dies is marked failed, with the reason (secrets withheld) and the redacted tail of its stderr
for health. A subclass opens the SDK's context (:meth:`SupervisedSession._open`) and says the
words its clients see: its states, the sentence for a slow start, its exception.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Generic, TextIO, TypeVar

T = TypeVar("T")
STDERR_TAIL = 2_000
STOP_GRACE = 10.0  # seconds a started peer is given to stop before its task is cancelled


class SessionUnavailable(Exception):
    """The peer could not be reached: not started, died, or hung (a sentence to show)."""


def reason(exc: BaseException) -> str:
    """A one-line reason for ``exc``, the first leaf of an exception group."""
    while isinstance(getattr(exc, "exceptions", None), (list, tuple)) and exc.exceptions:  # type: ignore[attr-defined]
        exc = exc.exceptions[0]  # type: ignore[attr-defined]
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text[:300]}" if text else type(exc).__name__


def missing_sdk(package: str, extra: str, setting: str) -> str:
    return (
        f"the '{package}' package is not installed: pip install 'jupyter-resolve[{extra}]' "
        f"to use c.Resolve.{setting}"
    )


class SupervisedSession(Generic[T]):
    """One peer: its state, its last error, its starts, its stderr, the session ``T``."""

    KIND = "peer"  # the log's name for it: "<KIND> '<name>': <error>"
    TASK = "peer"  # the serving task is "<TASK>-<name>"
    READY, FAILED = "ready", "failed"  # idle | starting | READY | FAILED | stopped
    SLOW_START = "did not start within"  # "<SLOW_START> <timeout> s"
    UNAVAILABLE: type[SessionUnavailable] = SessionUnavailable

    def __init__(
        self, name: str, *, stderr_path: Path, start_timeout: float, log: logging.Logger
    ) -> None:
        self.name = name
        self.stderr_path = stderr_path
        self.start_timeout = start_timeout
        self.log = log
        self.state = "idle"
        self.error: str | None = None
        self.starts = 0
        self.failed_at = -1e9  # monotonic time of the last failure
        self._session: T | None = None
        self._task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._lock = asyncio.Lock()

    def withhold(self, text: str) -> str:
        """``text`` with this peer's secrets taken out."""
        raise NotImplementedError

    def _import_sdk(self) -> None:
        """Import the SDK (on first need), or raise :attr:`UNAVAILABLE` saying how to get it."""
        raise NotImplementedError

    async def _open(self, stack: AsyncExitStack) -> T:
        """Start the peer inside ``stack`` and return the session, ready for callers."""
        raise NotImplementedError

    async def _hold(self) -> None:
        """Keep the session open (the stack unwinds on return): until the stop event."""
        await self._stop.wait()

    def _closed(self) -> None:
        """The session is gone (the serving task ends): drop what belonged to it."""

    def open_stderr(self, stack: AsyncExitStack) -> TextIO:
        """The peer's stderr file, truncated, readable by the owner only, closed with ``stack``."""
        self.stderr_path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.stderr_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.fchmod(fd, 0o600)
        return stack.enter_context(open(fd, "w", encoding="utf-8"))

    def stderr_tail(self) -> str:
        try:
            with self.stderr_path.open("rb") as handle:
                handle.seek(max(0, self.stderr_path.stat().st_size - STDERR_TAIL))
                text = handle.read().decode("utf-8", "replace")
        except OSError:
            return ""
        return self.withhold(text).strip()

    def fail(self, why: str) -> str:
        """Mark the peer failed, for ``why`` (secrets withheld, which is returned)."""
        self.state, self.error = self.FAILED, self.withhold(why)
        self.failed_at = time.monotonic()
        self.log.warning("%s '%s': %s", self.KIND, self.name, self.error)
        return self.error

    async def ensure(self) -> T:
        """The live session, the peer started first when it is not running."""
        async with self._lock:
            session, task = self._session, self._task
            if session is not None and task is not None and not task.done():
                return session
            await self._shutdown()
            self._import_sdk()
            self.starts += 1
            self.state, self.error = "starting", None
            ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            ready.add_done_callback(lambda f: f.cancelled() or f.exception())  # seen: below
            self._stop = asyncio.Event()
            self._task = asyncio.create_task(self._serve(ready), name=f"{self.TASK}-{self.name}")
            try:
                await asyncio.wait_for(asyncio.shield(ready), self.start_timeout)
            except asyncio.TimeoutError:
                why = f"{self.SLOW_START} {self.start_timeout:g} s"
            except SessionUnavailable as exc:
                why = str(exc)
            except Exception as exc:
                why = f"could not start: {reason(exc)}"
            else:
                self.state = self.READY
                assert self._session is not None
                return self._session
            await self._shutdown()
            raise self.UNAVAILABLE(self.fail(why))

    async def _serve(self, ready: asyncio.Future[None]) -> None:
        try:
            async with AsyncExitStack() as stack:
                self._session = await self._open(stack)
                ready.set_result(None)
                await self._hold()
        except Exception as exc:
            if not ready.done():
                ready.set_exception(exc)
            elif self.state == self.READY:
                self.fail(f"stopped: {reason(exc)}")
        finally:
            self._session = None
            self._closed()

    async def _shutdown(self) -> None:
        task, self._task = self._task, None
        if task is None:
            return
        self._stop.set()
        if self._session is None:
            task.cancel()  # not started (not ready in time): nothing to wait for
        await asyncio.wait({task}, timeout=STOP_GRACE)
        if not task.done():
            task.cancel()
        self._session = None

    async def stop(self) -> None:
        async with self._lock:
            await self._shutdown()
            if self.state != self.FAILED:
                self.state = "stopped" if self.starts else "idle"
