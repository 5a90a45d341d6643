"""agent-httpd, kept running for the gateway: the supervised life cycle of
:mod:`jupyter_resolve.supervised` (start, health checks, restart, stop) with what is its own.

The launch token reaches the runtime through an inherited pipe (``--token-fd``), never argv
and never an environment: ``/proc/<pid>/environ`` keeps a process's initial environment
readable by every process of the same user, and kernels inherit the server's. The runtime's
environment is an allowlist, so provider keys never reach it either. It announces its port on
its first line, then must answer ``/healthz``; it is checked every ``health_interval`` seconds
and started again at once when it dies or stops answering. Each agent-httpd belongs to the
supervisor that started it, one per server: :meth:`RuntimeSupervisor.stop` ends it, a start
still under way included, and no start comes after.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import secrets
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from ..contracts.errors import RuntimeStartError
from ..supervised import Supervised
from .client import RuntimeClient

ENV_ALLOWLIST = ("PATH", "LANG", "LC_ALL", "TZ")


class RuntimeSupervisor(Supervised[RuntimeClient]):
    """Keeps one agent-httpd running for the gateway: states stopped, starting, running,
    restarting, failed."""

    KIND, TASK = "agent-httpd", "agent-httpd"
    READY, IDLE = "running", "stopped"
    SLOW_START = "agent-httpd did not answer within"
    UNAVAILABLE = RuntimeStartError
    KEEP_RUNNING = True

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
        super().__init__(
            "runtime", start_timeout=start_timeout, log=log, health_interval=health_interval
        )
        self.binary = binary
        self.inference_url = inference_url
        self.tools_url = tools_url
        self.token = token
        self.max_runs = max_runs
        self.version: str | None = None
        self.client: RuntimeClient | None = None
        self._stopping = False

    @staticmethod
    def new_token() -> str:
        return secrets.token_urlsafe(32)

    @property
    def pid(self) -> int | None:
        proc = self.process
        return proc.pid if proc is not None else None

    @property
    def restarts(self) -> int:
        return max(0, self.starts - 1)

    @property
    def last_error(self) -> str | None:
        return self.error

    def describe(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "pid": self.pid if self.state == "running" else None,
            "version": self.version,
            "restarts": self.restarts,
            "url": self.client.base_url if self.client else None,
            "last_error": self.last_error,
        }

    def withhold(self, text: str) -> str:
        return text.replace(self.token, "[withheld]") if self.token else text

    async def ensure_running(self) -> RuntimeClient:
        """The client of a running runtime, starting it when needed."""
        return await self.ensure()

    async def exited(self, within: float) -> bool:
        """True when the runtime process has exited, or exits within ``within`` seconds."""
        proc = self.process
        if proc is None:
            return True
        try:
            await asyncio.wait_for(asyncio.shield(proc.wait()), within)
        except asyncio.TimeoutError:
            return False
        return True

    def _starting_state(self) -> str:
        return "restarting" if self.starts > 1 else "starting"

    def _check(self) -> None:
        if self._stopping:
            raise RuntimeStartError("agent-httpd: not started, the server is stopping")
        if not Path(self.binary).is_file():
            raise RuntimeStartError(
                self.fail(f"agent-httpd not found at {self.binary}; run `make setup`")
            )

    async def _open(self, stack: AsyncExitStack) -> RuntimeClient:
        env = {k: os.environ[k] for k in ENV_ALLOWLIST if k in os.environ}
        token_fd = self._token_pipe()
        argv = [
            self.binary,
            *("--port", "0", "--inference-url", self.inference_url),
            *("--tools-url", self.tools_url, "--max-runs", str(self.max_runs)),
            *("--token-fd", str(token_fd)),
        ]
        try:
            proc = await self.spawn(
                stack, argv, env=env, stdout=True, pass_fds=(token_fd,), grace=3.0
            )
        except OSError as exc:
            raise RuntimeStartError(f"cannot start agent-httpd: {exc}") from exc
        finally:
            os.close(token_fd)  # the child has its copy; it closes it once read
        port = await self._read_port(proc)
        if self.client is not None:
            await self.client.aclose()
        self.client = RuntimeClient(f"http://127.0.0.1:{port}", self.token)
        health = await self.client.health()
        self.version = str(health.get("version"))
        self.log.info("agent-httpd %s running, pid %s, port %s", self.version, proc.pid, port)
        return self.client

    async def _read_port(self, proc: asyncio.subprocess.Process) -> int:
        """The port agent-httpd announces on its first line."""
        assert proc.stdout is not None
        try:
            line = await proc.stdout.readline()
            return int(json.loads(line)["port"])
        except (ValueError, KeyError, TypeError) as exc:
            await asyncio.sleep(0.1)  # its last stderr lines
            raise RuntimeStartError(
                f"agent-httpd did not report its port: {self.stderr_lines(5)}"
            ) from exc

    def _token_pipe(self) -> int:
        """The read end of a pipe that holds the token and is closed for writing."""
        read_fd, write_fd = os.pipe()
        try:
            # far below the pipe's buffer, so this never blocks
            os.write(write_fd, self.token.encode() + b"\n")
        finally:
            os.close(write_fd)
        return read_fd

    async def _healthy(self) -> bool:
        assert self.client is not None
        await self.client.health()
        return True

    def _ended(self, returncode: int | None) -> None:
        self.error = f"agent-httpd exited with status {returncode}"
        self.log.warning("%s; restarting it", self.error)
        self.state = "restarting"

    async def stop(self) -> None:
        """End the runtime, and a start or restart under way; no start after this."""
        self._stopping = True
        await super().stop()
        if self.client is not None:
            await self.client.aclose()
            self.client = None
        self.state = "stopped"
