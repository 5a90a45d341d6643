"""Replicas of the hub service run beside a test's JupyterHub, as a Kubernetes Deployment runs
them: each its own ``python -m jupyter_resolve.hub`` process (not started by the hub), all on one
database, behind :class:`Balancer`, a loopback TCP balancer standing in for the Deployment's
Service (each new connection to the next replica that accepts it).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from tests.launcher import free_port, start_process

PREFIX = "/services/resolve/"


@dataclass
class Replica:
    """One service process; ``url`` is its own address (the balancer's is the hub's)."""

    name: str
    port: int
    workdir: Path
    env: dict[str, str]
    proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}{PREFIX}"

    def log(self) -> str:
        path = self.workdir / f"{self.name}.log"
        return path.read_text(errors="replace")[-8000:] if path.exists() else ""

    def spawn(self) -> None:
        """Start the process; :meth:`wait` for it to answer."""
        with open(self.workdir / f"{self.name}.log", "ab") as out:
            self.proc = start_process(
                [sys.executable, "-m", "jupyter_resolve.hub"],
                cwd=self.workdir,
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )

    def start(self, timeout: float = 60) -> None:
        self.spawn()
        self.wait(timeout)

    def wait(self, timeout: float = 60) -> None:
        assert self.proc is not None
        deadline = time.monotonic() + timeout
        while True:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.url}health/live", timeout=2).status_code == 200:
                    return
            assert self.proc.poll() is None, f"{self.name} exited:\n{self.log()}"
            assert time.monotonic() < deadline, f"{self.name} never answered:\n{self.log()}"
            time.sleep(0.2)

    def signal(self, signum: int) -> None:
        assert self.proc is not None and self.proc.poll() is None
        self.proc.send_signal(signum)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)

    def rss_kib(self) -> int:
        assert self.proc is not None
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise AssertionError("no VmRSS")


def replica_env(
    name: str, hub_api_url: str, token: str, port: int, extra: dict[str, str]
) -> dict[str, str]:
    """What JupyterHub would give a service, set by hand as a Deployment's spec sets it."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("JUPYTER_RESOLVE_", "JUPYTERHUB_", "JPY_"))
    }
    env.update(
        JUPYTERHUB_API_URL=hub_api_url,
        JUPYTERHUB_API_TOKEN=token,
        JUPYTERHUB_SERVICE_NAME="resolve",
        JUPYTERHUB_SERVICE_PREFIX=PREFIX,
        JUPYTERHUB_SERVICE_URL=f"http://127.0.0.1:{port}",
        JUPYTERHUB_CLIENT_ID="service-resolve",
        JUPYTERHUB_OAUTH_CALLBACK_URL=f"{PREFIX}oauth_callback",
    )
    env.update(extra)
    return env


@dataclass
class Balancer:
    """Each accepted connection goes to the next backend port that accepts one; when either
    side closes, so does the other. ``last`` is the backend of the newest connection."""

    backends: list[int]
    port: int = field(default_factory=free_port)
    last: int | None = None
    _loop: asyncio.AbstractEventLoop = field(default_factory=asyncio.new_event_loop)
    _next: int = 0

    def __enter__(self) -> Balancer:
        ready = threading.Event()
        threading.Thread(target=self._run, args=(ready,), daemon=True).start()
        assert ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)

    def _run(self, ready: threading.Event) -> None:
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(
            asyncio.start_server(self._serve, "127.0.0.1", self.port)
        )
        ready.set()
        try:
            self._loop.run_forever()
        finally:
            server.close()

    async def _connect(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
        for _ in range(len(self.backends)):
            port = self.backends[self._next % len(self.backends)]
            self._next += 1
            try:
                pair = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                continue
            self.last = port
            return pair
        return None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        upstream = await self._connect()
        if upstream is None:
            writer.close()
            return
        up_reader, up_writer = upstream

        async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
            try:
                while data := await source.read(65536):
                    sink.write(data)
                    await sink.drain()
            except OSError:
                pass
            finally:
                sink.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
