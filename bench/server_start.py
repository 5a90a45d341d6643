"""Server start, with and without the extension: what jupyter_resolve adds to a person's wait.

A ``jupyter server`` (through ``tests.launcher``, the tests' launcher: a temporary root and
config, a free loopback port, jupyterlab and the other installed extensions off) is started with
jupyter_resolve on and, alternately, off; each is timed from just before its process starts to
its first ``200`` from ``/api/status`` (polled every 5 ms), and with the extension on, to the
runtime reported running by ``/resolve/api/health``. Pairs alternate which goes first.

- ``server_start_ms``: with the extension, the median; its floor ``server_start_bare_ms``, the
  same server without it.
- ``server_start_extension_ms``: the median of the paired differences: the extension's share.
- ``server_runtime_ready_ms``: with the extension, until agent-httpd is running (it starts after
  the server listens, so a first chat may wait for it).
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable

import httpx

from tests.launcher import QUIET_EXTENSIONS
from tests.launcher import JupyterServer as LaunchedServer

from .core import BenchError, Context, Figure, median, runtime_binary
from .servers import _base_env

POLL_S = 0.005
TIMEOUT_S = 90.0


def _until(
    client: httpx.Client,
    url: str,
    ready: Callable[[httpx.Response], bool],
    proc: subprocess.Popen[bytes],
) -> float:
    """perf_counter when ``GET url`` first satisfies ``ready(response)``."""
    deadline = time.monotonic() + TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise BenchError("the server exited during its start")
        try:
            response = client.get(url)
        except httpx.TransportError:
            response = None
        if response is not None and ready(response):
            return time.perf_counter()
        time.sleep(POLL_S)
    raise BenchError(f"no answer from {url} within {TIMEOUT_S:g} s")


def _ok(response: httpx.Response) -> bool:
    return response.status_code == 200


def _runtime_running(response: httpx.Response) -> bool:
    if response.status_code != 200:
        return False
    runtime = response.json().get("runtime") or {}
    if runtime.get("state") == "failed":
        raise BenchError(f"the runtime failed to start: {runtime}")
    return bool(runtime.get("state") == "running")


def start_once(ctx: Context, extension: bool) -> tuple[float, float | None]:
    """Seconds from launch to listening, and (with the extension) to the runtime running."""
    server = LaunchedServer(
        extensions={**QUIET_EXTENSIONS, "jupyter_resolve": extension},
        env={"PYTHONPATH": _base_env(ctx.repo)["PYTHONPATH"]},
        cwd=ctx.repo,
        runtime=runtime_binary(ctx.repo),
        ready="listening",
    )
    with httpx.Client(timeout=5.0, headers=server.headers, trust_env=False) as client:
        try:
            began = time.perf_counter()
            server.spawn()
            assert server.proc is not None
            listening = _until(client, f"{server.url}/api/status", _ok, server.proc) - began
            runtime = None
            if extension:
                health = f"{server.url}/resolve/api/health"
                runtime = _until(client, health, _runtime_running, server.proc) - began
                server.health()  # notes the runtime's pid, so close() stops it
            return listening, runtime
        except BenchError as exc:
            raise BenchError(f"{exc}:\n{server.log_tail(15)}") from exc
        finally:
            server.close()


def server_start(ctx: Context) -> list[Figure]:
    pairs = ctx.repeats(2, 5)
    on: list[float] = []
    off: list[float] = []
    runtime: list[float] = []
    for i in range(pairs):
        for extension in (True, False) if i % 2 == 0 else (False, True):
            listening, ready = start_once(ctx, extension)
            (on if extension else off).append(listening * 1e3)
            if ready is not None:
                runtime.append(ready * 1e3)
    ctx.log(f"server start: {pairs} pairs, with {on} ms, without {off} ms")
    share = [a - b for a, b in zip(on, off, strict=True)]
    return [
        Figure(
            "server_start_ms",
            median(on),
            "ms",
            note=f"with jupyter_resolve, to /api/status; median of {pairs}",
            floor="server_start_bare_ms",
        ),
        Figure("server_start_bare_ms", median(off), "ms", note="the same server without it"),
        Figure(
            "server_start_extension_ms",
            median(share),
            "ms",
            note="median of the paired differences: the extension's share",
        ),
        Figure("server_runtime_ready_ms", median(runtime), "ms", note="until agent-httpd runs"),
    ]
