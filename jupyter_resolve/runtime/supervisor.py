"""Supervisor of agent-httpd: start with a fresh token, health-check, restart, stop.

The launch token reaches the runtime through an inherited pipe (``--token-fd``), never argv
and never an environment: ``/proc/<pid>/environ`` keeps a process's initial environment
readable by every process of the same user, and kernels inherit the server's. The runtime's
environment is an allowlist, so provider keys never reach it either.

Each agent-httpd belongs to the supervisor that started it, one per server: :meth:`stop` ends
it, a start still under way included, and one whose server never stopped (its supervisor
collected, or the process exiting) gets SIGTERM from a finalizer, through a pidfd, so a
reused pid is never hit.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import secrets
import signal
import time
import weakref
from pathlib import Path
from typing import Any, Literal

from ..contracts.errors import RuntimeStartError
from .client import RuntimeClient

State = Literal["stopped", "starting", "running", "restarting", "failed"]
ENV_ALLOWLIST = ("PATH", "LANG", "LC_ALL", "TZ")
HEALTH_FAILURES = 3  # consecutive failed checks before a live runtime is restarted


class RuntimeSupervisor:
    """Keeps one agent-httpd running for the gateway."""

    def __init__(
        self,
        *,
        binary: str,
        inference_url: str,
        tools_url: str,
        token: str,
        log: logging.Logger,
        start_timeout: float = 10.0,
        max_runs: int = 1024,
        health_interval: float = 2.0,
    ) -> None:
        self.binary = binary
        self.inference_url = inference_url
        self.tools_url = tools_url
        self.token = token
        self.log = log
        self.start_timeout = start_timeout
        self.max_runs = max_runs
        self.health_interval = health_interval
        self.state: State = "stopped"
        self.version: str | None = None
        self.restarts = 0
        self.last_error: str | None = None
        self.client: RuntimeClient | None = None
        self._proc: asyncio.subprocess.Process | None = None
        self._lock = asyncio.Lock()
        self._watch_task: asyncio.Task[None] | None = None
        self._stderr_task: asyncio.Task[None] | None = None
        self._stopping = False
        self._started_at = 0.0
        self._spawn: asyncio.Task[RuntimeClient] | None = None
        self._reaper: weakref.finalize[Any, Any] | None = None

    @staticmethod
    def new_token() -> str:
        return secrets.token_urlsafe(32)

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def describe(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "pid": self.pid if self.state == "running" else None,
            "version": self.version,
            "restarts": self.restarts,
            "url": self.client.base_url if self.client else None,
            "last_error": self.last_error,
        }

    async def ensure_running(self) -> RuntimeClient:
        """The client of a running runtime, starting it when needed."""
        if self.state == "running" and self.client is not None and self._alive():
            return self.client
        async with self._lock:
            if self.state == "running" and self.client is not None and self._alive():
                return self.client
            # A task of its own, so that stop() can cancel a start under way without
            # cancelling the caller (a request, the server's start hook).
            spawn = self._spawn = asyncio.create_task(self._start())
            await asyncio.wait({spawn})
            if spawn.cancelled():
                raise RuntimeStartError("agent-httpd: the server stopped while it started")
            return spawn.result()

    async def exited(self, within: float) -> bool:
        """True when the runtime process has exited, or exits within ``within`` seconds."""
        proc = self._proc
        if proc is None:
            return True
        try:
            await asyncio.wait_for(asyncio.shield(proc.wait()), within)
        except asyncio.TimeoutError:
            return False
        return True

    def _alive(self) -> bool:
        return self._proc is not None and self._proc.returncode is None

    async def _start(self) -> RuntimeClient:
        if self._stopping:
            raise RuntimeStartError("agent-httpd: not started, the server is stopping")
        if not Path(self.binary).is_file():
            self.state = "failed"
            self.last_error = f"agent-httpd not found at {self.binary}; run `make setup`"
            raise RuntimeStartError(self.last_error)
        self.state = "starting" if self.restarts == 0 else "restarting"
        env = {k: os.environ[k] for k in ENV_ALLOWLIST if k in os.environ}
        token_fd = self._token_pipe()
        argv = [
            self.binary,
            "--port",
            "0",
            "--inference-url",
            self.inference_url,
            "--tools-url",
            self.tools_url,
            "--max-runs",
            str(self.max_runs),
            "--token-fd",
            str(token_fd),
        ]
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                env=env,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
                pass_fds=(token_fd,),
            )
        except OSError as exc:
            self.state = "failed"
            self.last_error = f"cannot start agent-httpd: {exc}"
            raise RuntimeStartError(self.last_error) from exc
        finally:
            os.close(token_fd)  # the child has its copy; it closes it once read
        if self._reaper is not None:
            self._reaper()  # the runtime before, gone: its pidfd closed
        self._proc = proc
        self._reaper = weakref.finalize(self, _terminate, _pidfd(proc.pid), proc.pid)
        try:
            port = await self._read_port(proc)
            self._stderr_task = asyncio.create_task(self._pump_stderr(proc))
            if self.client is not None:
                await self.client.aclose()
            self.client = RuntimeClient(f"http://127.0.0.1:{port}", self.token)
            health = await self.client.health()
        except BaseException:  # a failed check, or stop() cancelling: no process left behind
            await self._kill(proc)
            raise
        self.version = str(health.get("version"))
        self.state = "running"
        self.last_error = None
        self._started_at = time.monotonic()
        self.log.info("agent-httpd %s running, pid %s, port %s", self.version, proc.pid, port)
        if self._watch_task is None or self._watch_task.done():
            self._watch_task = asyncio.create_task(self._watch())
        return self.client

    async def _read_port(self, proc: asyncio.subprocess.Process) -> int:
        """The port agent-httpd announces on its first line."""
        try:
            assert proc.stdout is not None
            line = await asyncio.wait_for(proc.stdout.readline(), self.start_timeout)
            return int(json.loads(line)["port"])
        except (asyncio.TimeoutError, ValueError, KeyError, TypeError) as exc:
            err = b""
            if proc.stderr is not None and proc.returncode is not None:
                err = await proc.stderr.read(2000)
            await self._kill(proc)
            self.state = "failed"
            self.last_error = f"agent-httpd did not report its port: {err.decode(errors='replace')}"
            raise RuntimeStartError(self.last_error) from exc

    def _token_pipe(self) -> int:
        """The read end of a pipe that holds the token and is closed for writing."""
        read_fd, write_fd = os.pipe()
        try:
            # far below the pipe's buffer, so this never blocks
            os.write(write_fd, self.token.encode() + b"\n")
        finally:
            os.close(write_fd)
        return read_fd

    async def _pump_stderr(self, proc: asyncio.subprocess.Process) -> None:
        assert proc.stderr is not None
        async for line in proc.stderr:
            self.log.debug("agent-httpd: %s", line.decode(errors="replace").rstrip())

    async def _watch(self) -> None:
        """Restart the runtime when it dies; check its health in between."""
        failures = 0
        while not self._stopping:
            proc = self._proc
            if proc is None:
                return
            try:
                await asyncio.wait_for(proc.wait(), self.health_interval)
            except asyncio.TimeoutError:
                if self.client is None:
                    continue
                try:
                    await self.client.health()
                    failures = 0
                    continue
                except Exception as exc:  # any failure of the check means "not healthy"
                    failures += 1
                    self.log.warning("agent-httpd health check %d failed: %s", failures, exc)
                    if failures < HEALTH_FAILURES:
                        continue  # a loaded machine can be slow once; a hung runtime stays so
                    await self._kill(proc)
            if self._stopping:
                return
            self.last_error = f"agent-httpd exited with status {proc.returncode}"
            self.log.warning("%s; restarting it", self.last_error)
            self.restarts += 1
            self.state = "restarting"
            delay = 0.0 if time.monotonic() - self._started_at > 5 else 0.5
            await asyncio.sleep(delay)
            try:
                async with self._lock:
                    if not self._alive():
                        await self._start()
                failures = 0
            except Exception as exc:
                self.log.error("agent-httpd restart failed: %s", exc)
                await asyncio.sleep(2.0)

    async def _kill(self, proc: asyncio.subprocess.Process) -> None:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.terminate()
            try:
                await asyncio.wait_for(proc.wait(), 3.0)
            except asyncio.TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                await proc.wait()
        if proc is self._proc and self._reaper is not None:
            self._reaper()  # it has exited: only its pidfd to close

    async def stop(self) -> None:
        """End the runtime, and a start or restart under way; no start after this."""
        self._stopping = True
        for task in (self._watch_task, self._spawn):
            if task is not None and not task.done():
                task.cancel()
                await asyncio.wait({task})
        if self._proc is not None:
            await self._kill(self._proc)
        if self._stderr_task is not None:
            self._stderr_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._stderr_task
        if self.client is not None:
            await self.client.aclose()
            self.client = None
        self.state = "stopped"


def _pidfd(pid: int) -> int | None:
    """A descriptor that names this process and no later one with its pid (Linux 5.3+)."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _terminate(pidfd: int | None, pid: int) -> None:
    """The finalizer of a runtime whose supervisor went without stopping it (or that exited)."""
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
