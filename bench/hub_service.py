"""The hub service (issue 48.8): what ``python -m jupyter_resolve.hub`` adds to the first byte
of an answer over the upstream alone, and 500 streams at once through one replica.

One replica of the service runs as its own process on a SQLite file, in front of the fake
OpenAI server (``long``, 50 chunks an answer) and a stand-in for JupyterHub's API that answers
``GET /hub/api/user`` for the bench's token (the service keeps a token's answer five minutes,
as it does under a real hub, so this is asked once). Figures:

- ``hub_first_byte_overhead_ms``: the time to the first byte of a streamed chat completion
  through the service minus the same straight from the fake, paired back to back on kept-alive
  connections; median (goal ≤ 5 ms), and p99;
- ``hub_concurrent_500_errors``: 500 streams started at once (``bench/lean_client.py``, one
  connection each) through the service with no per-user cap: answers that failed or lacked
  their ``[DONE]`` (goal 0); ``_wall_s``; the replica's CPU per stream (``_cpu_per_stream_ms``)
  beside the fake upstream's (``_upstream_cpu_per_stream_ms``), and its peak RSS.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

from .core import BenchError, Context, Figure, Goal, median, percentile
from .lean_client import stream_post
from .proc import cpu_seconds, status_kib
from .servers import FakeProvider

TOKEN = "bench-hub-token-0123456789abcdef"
USER = {"kind": "user", "name": "bench", "admin": False, "groups": []}
BODY = {"model": "fake-model", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
CHUNKS = 50
STREAMS = 500


class FakeHubAPI(BaseHTTPRequestHandler):
    """``GET /hub/api/user``: the bench's user, for its token."""

    def do_GET(self) -> None:
        ok = self.path.startswith("/hub/api/user") and TOKEN in self.headers.get(
            "Authorization", ""
        )
        model = {**USER, "scopes": ["access:services!service=resolve"]}
        data = json.dumps(model if ok else {"error": "no"}).encode()
        self.send_response(200 if ok else 403)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        return None


class HubService:
    """The service's process, on a port of its own, until :meth:`close`."""

    def __init__(self, ctx: Context, upstream: str, hub_api: str) -> None:
        from tests.launcher import free_port, start_process

        self.port = free_port()
        workdir = ctx.tmp() / "hub-service"
        workdir.mkdir(exist_ok=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTERHUB_")}
        env.update(
            JUPYTERHUB_API_URL=hub_api,
            JUPYTERHUB_API_TOKEN="bench-service-token",
            JUPYTERHUB_SERVICE_NAME="resolve",
            JUPYTERHUB_SERVICE_PREFIX="/services/resolve/",
            JUPYTERHUB_SERVICE_URL=f"http://127.0.0.1:{self.port}",
            OPENAI_API_KEY="sk-bench",
            PYTHONPATH=str(ctx.repo),
        )
        argv = [
            sys.executable,
            "-m",
            "jupyter_resolve.hub",
            f"--ResolveHub.openai_base_url={upstream}",
        ]
        argv += ["--ResolveHub.max_concurrent=0", "--ResolveHub.log_level=WARN"]
        self.log = workdir / "service.log"
        with open(self.log, "wb") as out:
            self.proc = start_process(
                argv, cwd=workdir, env=env, stdout=out, stderr=subprocess.STDOUT
            )
        self.url = f"http://127.0.0.1:{self.port}/services/resolve/v1/chat/completions"
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{self.url[: -len('v1/chat/completions')]}health/live").is_success:
                    return
            except httpx.HTTPError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.close()
                raise BenchError(f"the hub service did not start: {self.log.read_text()[-500:]}")
            time.sleep(0.2)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def _first_byte(client: httpx.Client, url: str, headers: dict[str, str]) -> float:
    started = time.perf_counter()
    with client.stream("POST", url, json=BODY, headers=headers) as answer:
        if answer.status_code != 200:
            raise BenchError(f"{url} answered {answer.status_code}: {answer.read()[:200]!r}")
        pieces = answer.iter_raw()
        if next(pieces, None) is None:
            raise BenchError(f"{url} answered nothing")
        elapsed = time.perf_counter() - started
        for _ in pieces:  # read it to its end: the connection is kept
            pass
    return elapsed


async def _burst(url: str, headers: dict[str, str], n: int) -> int:
    body = json.dumps(BODY).encode()

    async def one() -> bool:
        tail = b""
        try:
            async for piece in stream_post(url, headers, body, timeout=120):
                tail = (tail + piece)[-64:]
        except Exception:
            return False
        return b"[DONE]" in tail

    done = await asyncio.gather(*(one() for _ in range(n)))
    return sum(not ok for ok in done)


def hub_service(ctx: Context) -> list[Figure]:
    hub_api = ThreadingHTTPServer(("127.0.0.1", 0), FakeHubAPI)
    threading.Thread(target=hub_api.serve_forever, daemon=True).start()
    ctx.stack.callback(hub_api.shutdown)
    fake = ctx.stack.enter_context(FakeProvider(ctx.repo, chunks=CHUNKS))
    service = HubService(ctx, fake.base_url, f"http://127.0.0.1:{hub_api.server_port}/hub/api")
    ctx.stack.callback(service.close)
    headers = {"Authorization": f"token {TOKEN}"}
    direct_url = f"{fake.base_url}/chat/completions"
    diffs: list[float] = []
    directs: list[float] = []
    with httpx.Client(timeout=60) as through, httpx.Client(timeout=60) as straight:
        for _ in range(3):  # warm both paths and the service's token cache
            _first_byte(through, service.url, headers)
            _first_byte(straight, direct_url, {})
        for _ in range(ctx.repeats(40, 200)):
            direct = _first_byte(straight, direct_url, {})
            hub = _first_byte(through, service.url, headers)
            diffs.append(1000 * (hub - direct))
            directs.append(1000 * direct)
    n = ctx.repeats(200, STREAMS)
    cpu_before, upstream_before = cpu_seconds(service.proc.pid), cpu_seconds(fake.pid)
    peak = [status_kib(service.proc.pid)]
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(0.05):
            try:
                peak.append(status_kib(service.proc.pid))
            except BenchError:
                return

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    started = time.perf_counter()
    errors = asyncio.run(_burst(service.url, headers, n))
    wall = time.perf_counter() - started
    stop.set()
    sampler.join(5)
    cpu = cpu_seconds(service.proc.pid) - cpu_before
    upstream = cpu_seconds(fake.pid) - upstream_before
    name = f"hub_concurrent_{n}"
    return [
        Figure(
            "hub_first_byte_overhead_ms",
            round(median(diffs), 2),
            "ms",
            Goal(5.0),
            floor="hub_upstream_first_byte_ms",
        ),
        Figure("hub_upstream_first_byte_ms", round(median(directs), 2), "ms"),
        Figure("hub_first_byte_overhead_p99_ms", round(percentile(diffs, 0.99), 2), "ms"),
        Figure(f"{name}_errors", errors, "streams", Goal(0)),
        Figure(f"{name}_wall_s", round(wall, 2), "s"),
        Figure(f"{name}_cpu_per_stream_ms", round(1000 * cpu / n, 2), "ms"),
        Figure(f"{name}_upstream_cpu_per_stream_ms", round(1000 * upstream / n, 2), "ms"),
        Figure(f"{name}_rss_peak_kib", max(peak), "KiB"),
    ]


__all__ = ["hub_service"]
