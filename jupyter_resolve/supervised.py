"""Every child process the gateway keeps, supervised one way: start, health, restart, the tail
of its stderr with secrets withheld, stop.

The children: agent-httpd (:mod:`.runtime.supervisor`), the local model's llama.cpp server
(:mod:`.providers.local_server`), the external agents (:mod:`.acp.agents`) and the MCP servers
(:mod:`.mcp.connections`), the last two spawned by their SDKs. A child starts on first need
(:meth:`Supervised.ensure`, under a lock: one start at a time) and must be ready within a start
timeout. It lives in a task of its own that holds its context open until a stop (an SDK's
context must be left by the task that entered it); callers use it from theirs. It ends when it
is stopped, when its process exits, or after :data:`HEALTH_FAILURES` failed health checks in a
row; then it starts again on the next need, or at once for a child that must always run
(``KEEP_RUNNING``). A child that fails to start or dies is marked failed with the reason and the
tail of its stderr, its secrets withheld, for health. A subclass opens the child
(:meth:`Supervised._open`, with :meth:`Supervised.spawn` for a process of its own) and says the
words its clients see: its states, the sentence for a slow start, its exception.

A process spawned here gets an allowlisted environment from the caller, a session of its own,
SIGTERM (then SIGKILL after a grace) when its context closes, and SIGTERM from a finalizer,
through a pidfd so a reused pid is never hit, if its supervisor goes without stopping it (or the
server's process exits).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import os
import signal
import time
import weakref
from collections.abc import Callable, Sequence
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, Generic, TextIO, TypeVar

from .contracts.errors import Unavailable

T = TypeVar("T")
STDERR_TAIL = 2_000  # characters of stderr health shows
STDERR_LINES = 40  # lines kept of a spawned process's stderr
STOP_GRACE = 10.0  # seconds a started child is given to stop before its task is cancelled
HEALTH_FAILURES = 3  # failed checks in a row before a live child is stopped
FIRST = asyncio.FIRST_COMPLETED


class SessionUnavailable(Unavailable):
    """The child could not be reached: not started, died, or hung (a sentence to show)."""

    code = "session_unavailable"


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


class Supervised(Generic[T]):
    """One child: its state, its last error, its starts, its stderr, the session ``T``."""

    KIND = "peer"  # the log's name for it: "<KIND> '<name>': <error>"
    TASK = "peer"  # the serving task is "<TASK>-<name>"
    READY, FAILED = "ready", "failed"  # idle | starting | READY | FAILED | STOPPED
    IDLE, STOPPED = "idle", "stopped"
    SLOW_START = "did not start within"  # "<SLOW_START> <timeout> s"
    UNAVAILABLE: type[Exception] = SessionUnavailable
    KEEP_RUNNING = False  # started again at once when it ends unasked (else on next need)

    def __init__(
        self,
        name: str,
        *,
        start_timeout: float,
        log: logging.Logger,
        stderr_path: Path | None = None,
        health_interval: float | None = None,
    ) -> None:
        self.name = name
        self.stderr_path = stderr_path  # the file an SDK writes its stderr to; else kept here
        self.start_timeout = start_timeout
        self.health_interval = health_interval
        self.log = log
        self.state = self.IDLE
        self.error: str | None = None
        self.starts = 0
        self.failed_at = -1e9  # monotonic time of the last failure
        self.started_at = 0.0  # monotonic time of the last start that got ready
        self.process: asyncio.subprocess.Process | None = None  # one spawned here
        self._session: T | None = None
        self._task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._lock = asyncio.Lock()
        self._stderr: collections.deque[str] = collections.deque(maxlen=STDERR_LINES)
        self._respawn: asyncio.Task[None] | None = None
        self._reaper: weakref.finalize[Any, Any] | None = None

    # what a subclass says and does

    def withhold(self, text: str) -> str:
        """``text`` with this child's secrets taken out."""
        return text

    def _check(self) -> None:
        """Before a start: raise :attr:`UNAVAILABLE` when the child cannot start at all (its
        SDK or its files missing), saying what to do."""

    async def _open(self, stack: AsyncExitStack) -> T:
        """Start the child inside ``stack`` and return the session, ready for callers."""
        raise NotImplementedError

    async def _healthy(self) -> bool:
        """One health check of a live child (every ``health_interval`` seconds)."""
        return True

    def _ended(self, returncode: int | None) -> None:
        """The child ended unasked (its process exited, or it failed its health checks); a
        subclass's :meth:`_hold` may have said why already."""
        if self.state != self.FAILED:
            self.fail(f"exited with code {returncode}; it starts again on the next use")

    def _closed(self) -> None:
        """The session is gone (the serving task ends): drop what belonged to it."""

    def _starting_state(self) -> str:
        return "starting"

    def _unavailable(self, message: str, cause: BaseException | None) -> Exception:
        """The exception a failed start raises, for ``message`` (secrets withheld)."""
        return self.UNAVAILABLE(message)

    # the life cycle

    def fail(self, why: str) -> str:
        """Mark the child failed, for ``why`` (secrets withheld, which is returned)."""
        self.state, self.error = self.FAILED, self.withhold(why)
        self.failed_at = time.monotonic()
        self.log.warning("%s '%s': %s", self.KIND, self.name, self.error)
        return self.error

    @property
    def running(self) -> bool:
        task = self._task
        return self._session is not None and task is not None and not task.done()

    async def ensure(self) -> T:
        """The live session, the child started first when it is not running."""
        if self.running:
            assert self._session is not None
            return self._session
        async with self._lock:
            if self.running:
                assert self._session is not None
                return self._session
            await self._shutdown()
            self._check()
            return await self._start()

    async def _start(self) -> T:
        self.starts += 1
        self.state, self.error = self._starting_state(), None
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        ready.add_done_callback(lambda f: f.cancelled() or f.exception())  # seen: below
        self._stop = asyncio.Event()
        self._task = asyncio.create_task(self._serve(ready), name=f"{self.TASK}-{self.name}")
        cause: BaseException | None = None
        try:
            await asyncio.wait_for(asyncio.shield(ready), self.start_timeout)
        except asyncio.TimeoutError:
            why = f"{self.SLOW_START} {self.start_timeout:g} s"
        except asyncio.CancelledError:
            if not ready.cancelled():
                raise  # the caller was cancelled, not the start
            await self._shutdown()
            stopped = f"{self.KIND} '{self.name}': stopped while it started"
            raise self._unavailable(stopped, None) from None
        except (SessionUnavailable, self.UNAVAILABLE) as exc:
            why, cause = str(exc), exc
        except Exception as exc:
            why, cause = f"could not start: {reason(exc)}", exc
        else:
            self.state, self.started_at = self.READY, time.monotonic()
            assert self._session is not None
            return self._session
        await self._shutdown()
        raise self._unavailable(self.fail(why), cause)

    async def _serve(self, ready: asyncio.Future[None]) -> None:
        served = False
        proc: asyncio.subprocess.Process | None = None
        try:
            async with AsyncExitStack() as stack:
                self._session = await self._open(stack)
                proc, served = self.process, True
                ready.set_result(None)
                await self._hold()
        except Exception as exc:
            if not ready.done():
                ready.set_exception(exc)
            elif self.state == self.READY:
                self.fail(f"stopped: {reason(exc)}")
        finally:
            if not ready.done():
                ready.cancel()  # stopped while it started
            self._session = None
            self.process = None
            self._closed()
        if served and not self._stop.is_set():
            self._ended(proc.returncode if proc is not None else None)
            if self.KEEP_RUNNING:
                self._respawn = asyncio.create_task(self._start_again())

    async def _hold(self) -> None:
        """Until the stop event, the spawned process's exit, or the last of
        :data:`HEALTH_FAILURES` failed checks in a row; the stack then unwinds."""
        stop = asyncio.ensure_future(self._stop.wait())
        proc = self.process
        waits = {stop, *([asyncio.ensure_future(proc.wait())] if proc is not None else [])}
        failures = 0
        try:
            interval = self.health_interval
            while not (await asyncio.wait(waits, timeout=interval, return_when=FIRST))[0]:
                try:
                    healthy = await self._healthy()
                except Exception as exc:  # any failure of the check means "not healthy"
                    healthy = False
                    self.log.warning("%s '%s': health check: %s", self.KIND, self.name, exc)
                failures = 0 if healthy else failures + 1
                if failures >= HEALTH_FAILURES:  # a loaded machine can be slow once; a hung
                    break  # child stays so
        finally:
            for waiting in waits:
                waiting.cancel()

    async def _start_again(self) -> None:
        """After an unasked end: start again (at once, unless it ran less than 5 s)."""
        await asyncio.sleep(0.0 if time.monotonic() - self.started_at > 5 else 0.5)
        while not self._stop.is_set():
            try:
                await self.ensure()
                return
            except Exception as exc:
                self.log.error("%s '%s': restart failed: %s", self.KIND, self.name, exc)
                await asyncio.sleep(2.0)

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
            await asyncio.wait({task})
        self._session = None

    async def stop(self) -> None:
        """Stop the child, a start under way included (it is cancelled, not waited for)."""
        self._stop.set()
        respawn, self._respawn = self._respawn, None
        if respawn is not None and respawn is not asyncio.current_task():
            respawn.cancel()
        if self._task is not None and self._session is None:
            self._task.cancel()  # a start under way
        async with self._lock:
            await self._shutdown()
            if self.state != self.FAILED:
                self.state = self.STOPPED if self.starts else self.IDLE

    # a process of its own, and its stderr

    async def spawn(
        self,
        stack: AsyncExitStack,
        argv: Sequence[str],
        *,
        env: dict[str, str],
        stdout: bool = False,
        pass_fds: Sequence[int] = (),
        grace: float = 5.0,
        preexec_fn: Callable[[], None] | None = None,
    ) -> asyncio.subprocess.Process:
        """``argv`` started in a session of its own, stopped when ``stack`` closes; its stderr
        kept (:meth:`stderr_tail`) and each line given to :meth:`_stderr_line`."""
        self._stderr.clear()
        pipe, devnull = asyncio.subprocess.PIPE, asyncio.subprocess.DEVNULL
        proc = await asyncio.create_subprocess_exec(
            *argv,
            env=env,
            stdin=devnull,
            stdout=pipe if stdout else devnull,
            stderr=pipe,
            start_new_session=True,
            pass_fds=tuple(pass_fds),
            preexec_fn=preexec_fn,
        )
        self.process = proc
        if self._reaper is not None:
            self._reaper()  # the process before, gone: its pidfd closed
        self._reaper = weakref.finalize(self, _terminate, _pidfd(proc.pid), proc.pid)
        pump = asyncio.create_task(self._pump_stderr(proc))
        stack.push_async_callback(self._end_process, proc, pump, grace)
        return proc

    async def _pump_stderr(self, proc: asyncio.subprocess.Process) -> None:
        assert proc.stderr is not None
        while line := await proc.stderr.readline():
            text = line.decode("utf-8", "replace").rstrip()
            self._stderr_line(text)
            if text:
                self._stderr.append(text)

    def _stderr_line(self, line: str) -> None:
        """A line the spawned process wrote to stderr (the log's at debug level)."""
        self.log.debug("%s '%s': %s", self.KIND, self.name, self.withhold(line))

    async def _end_process(
        self, proc: asyncio.subprocess.Process, pump: asyncio.Task[None], grace: float
    ) -> None:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(proc.wait(), grace)
            except asyncio.TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                await proc.wait()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(pump), 0.5)  # its last lines
        pump.cancel()
        if self._reaper is not None and self._reaper.alive and self.process in (None, proc):
            self._reaper()  # it has exited: only its pidfd to close

    def stderr_lines(self, n: int) -> str:
        """The last ``n`` lines a spawned process wrote to stderr, joined by " | "."""
        return self.withhold(" | ".join(list(self._stderr)[-n:]))

    def open_stderr(self, stack: AsyncExitStack) -> TextIO:
        """The stderr file for an SDK to write to: truncated, readable by the owner only,
        closed with ``stack``."""
        assert self.stderr_path is not None
        self.stderr_path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.stderr_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.fchmod(fd, 0o600)
        return stack.enter_context(open(fd, "w", encoding="utf-8"))

    def stderr_tail(self) -> str:
        """The end of the child's stderr, secrets withheld."""
        if self.stderr_path is None:
            text = "\n".join(self._stderr)[-STDERR_TAIL:]
        else:
            try:
                with self.stderr_path.open("rb") as handle:
                    handle.seek(max(0, self.stderr_path.stat().st_size - STDERR_TAIL))
                    text = handle.read().decode("utf-8", "replace")
            except OSError:
                return ""
        return self.withhold(text).strip()


def _pidfd(pid: int) -> int | None:
    """A descriptor that names this process and no later one with its pid (Linux 5.3+)."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _terminate(pidfd: int | None, pid: int) -> None:
    """The finalizer of a process whose supervisor went without stopping it (or that exited)."""
    if pidfd is None:  # no pidfd here: signal it only while it is still an unreaped child
        with contextlib.suppress(OSError):  # ChildProcessError: reaped, its pid maybe reused
            if os.waitpid(pid, os.WNOHANG) == (0, 0):
                os.kill(pid, signal.SIGTERM)
        return
    try:
        signal.pidfd_send_signal(pidfd, signal.SIGTERM)
    except OSError:
        pass  # it has exited already
    finally:
        os.close(pidfd)
