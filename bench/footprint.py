"""Footprint: the runtime's resident memory, and the extension's import time.

``runtime_rss_*`` read ``/proc/<pid>/status`` of the agent-httpd the gateway runs (its pid from
``/resolve/api/health``). The import figures come from fresh interpreters that each time their
import of jupyter_server's part, then of ours (``extension_own_import_ms``), then the
extension's load into a ServerApp (``bench/import_probe.py``); medians.
``runtime_rss_per_run_kib`` holds N runs live at once (a server of its own, on a fake whose
answers stall after their first word) and divides the runtime's RSS growth over its idle RSS
by N.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

from .chain import frames
from .core import BenchError, Context, Figure, Goal, median
from .proc import status_kib

if TYPE_CHECKING:
    from .servers import JupyterServer

IMPORT_GOAL_MS = 150.0
RSS_GOAL_KIB = 4096.0
RUN_GOAL_KIB = 64.0
QUICK_BUDGET_S = 8.0  # --quick starts no new import round after this long


def proc_status(pid: int) -> dict[str, str]:
    """``/proc/<pid>/status`` as {field: value}; checks that ``pid`` is an agent-httpd."""
    try:
        exe = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError as exc:
        raise BenchError(f"cannot read /proc/{pid}: {exc}") from exc
    if not exe.endswith(b"agent-httpd"):
        raise BenchError(f"pid {pid} from /resolve/api/health is not agent-httpd: {exe!r}")
    status = {}
    for line in text.splitlines():
        name, _, value = line.partition(":")
        status[name] = value.strip()
    return status


def kib(status: dict[str, str], name: str) -> float:
    value = status.get(name, "")
    if not value.endswith(" kB"):
        raise BenchError(f"/proc status has no {name} in kB: {value!r}")
    return float(value[:-3])


def _idle_status(ctx: Context) -> dict[str, str]:
    """The runtime's status once no run is live, after a short settle."""
    server = ctx.server()
    deadline = time.monotonic() + 30
    while (server.health().get("runs") or {}).get("live", 0) and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(0.3)
    return proc_status(server.runtime_pid())


def runtime_rss_fresh(ctx: Context) -> list[Figure]:
    """Before any chat (register before the chain metrics); context for the idle figure."""
    return [Figure("runtime_rss_fresh_kib", kib(_idle_status(ctx), "VmRSS"), "KiB")]


def runtime_rss_idle(ctx: Context) -> list[Figure]:
    """Idle again after the chats (register after the chain metrics): the goal figure."""
    status = _idle_status(ctx)
    return [
        Figure("runtime_rss_idle_kib", kib(status, "VmRSS"), "KiB", Goal(RSS_GOAL_KIB)),
        Figure("runtime_rss_peak_kib", kib(status, "VmHWM"), "KiB", note="VmHWM"),
    ]


def _run(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, str]:
    """(wall ms, stdout) of a fresh interpreter run with ``argv``."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, *argv], cwd=cwd, env=env, capture_output=True, check=False
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise BenchError(f"python {argv} failed:\n{done.stderr.decode(errors='replace')}")
    return elapsed * 1e3, done.stdout.decode()


def extension_import(ctx: Context) -> list[Figure]:
    """Fresh interpreters run ``bench.import_probe``: one times jupyter_server's import, then
    ours, then the extension's load into a ServerApp; ours is measured on its own, not as the
    difference of two noisy multi-second imports."""
    runs = ctx.repeats(3, 5)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ctx.repo), env.get("PYTHONPATH", "")) if p)
    env.pop("PYTHONSTARTUP", None)
    env["JUPYTER_NO_CONFIG"] = "1"  # a ServerApp with our extension only, no user config
    env["JUPYTER_RUNTIME_DIR"] = str(ctx.tmp() / "probe-runtime")
    root = ctx.tmp() / "probe-root"
    root.mkdir(exist_ok=True)
    # bytecode first (an edited module would otherwise compile inside the first sample)
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(ctx.repo / "jupyter_resolve")],
        env=env,
        capture_output=True,
        check=False,
    )
    bare: list[float] = []
    probes: list[dict[str, float]] = []
    started = time.monotonic()
    # the full run's extra first round fills the page cache; --quick relies on compileall
    for i in range(runs if ctx.quick else runs + 1):
        if ctx.quick and i > 1 and time.monotonic() - started > QUICK_BUDGET_S:
            break  # a loaded machine: keep --quick quick, with fewer samples
        wall_bare, _ = _run(["-c", "pass"], ctx.repo, env)
        _, out = _run(["-m", "bench.import_probe", str(root)], ctx.repo, env)
        if i > 0 or ctx.quick:
            bare.append(wall_bare)
            probes.append(json.loads(out.strip().splitlines()[-1]))

    def of(name: str) -> float:
        return median([probe[name] for probe in probes])

    return [
        Figure(
            "extension_own_import_ms",
            of("own_ms"),
            "ms",
            Goal(IMPORT_GOAL_MS),
            note=f"median of {len(probes)}: importing jupyter_resolve.extension in an "
            "interpreter that has imported jupyter_server's part",
        ),
        Figure(
            "extension_load_ms",
            of("load_ms"),
            "ms",
            note="loading it into a ServerApp: the imports deferred to then, the gateway",
        ),
        Figure(
            "extension_import_ms",
            median([probe["server_ms"] + probe["own_ms"] for probe in probes]),
            "ms",
            note="jupyter_server's part and ours",
        ),
        Figure("jupyter_server_import_ms", of("server_ms"), "ms", note="jupyter_server's part"),
        Figure("python_startup_ms", median(bare), "ms", note="python -c pass"),
    ]


def _sse(obj: dict[str, Any]) -> str:
    return "data: " + json.dumps(obj) + "\n\n"


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": "fake-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def slow_scenario(delay: float) -> list[dict[str, Any]]:
    """Replies for the fake: the first at once (the warm-up), then each stalls ``delay`` s
    after its first word, so the runs stay live mid-stream."""

    def reply(pause: float) -> dict[str, Any]:
        head = _sse(_chunk({"role": "assistant", "content": ""})) + _sse(
            _chunk({"content": "slow"})
        )
        tail = _sse(_chunk({"content": " answer"})) + _sse(_chunk({}, "stop")) + "data: [DONE]\n\n"
        return {
            "status": 200,
            "headers": [["Content-Type", "text/event-stream"], ["Cache-Control", "no-cache"]],
            "parts": [{"data": head, "delay": 0}, {"data": tail, "delay": pause}],
            "transfer": "chunked",
        }

    return [reply(0.0), reply(delay)]


async def _hold_runs(
    server: JupyterServer, n: int, runtime: int, settle: float
) -> tuple[float, int, int]:
    """Start ``n`` slow chats; once all stream (or ``settle`` s pass) read the runtime's RSS,
    then cancel the runs (their answers would stall for a long while yet).

    Returns (VmRSS KiB, runs live by /resolve/api/health, chats that had their first word)."""
    url = f"{server.url}/resolve/api/chat"
    streaming = 0
    all_streaming = asyncio.Event()
    run_ids: list[str] = []

    async def chat(client: httpx.AsyncClient) -> None:
        nonlocal streaming
        body = {"messages": [{"role": "user", "content": "hold on"}]}
        async with client.stream("POST", url, json=body) as response:
            counted = False
            buffer = b""
            async for data in response.aiter_raw():
                if not run_ids or len(buffer) < 4096:
                    buffer += data
                if not counted and b"text.delta" in buffer:
                    counted = True
                    streaming += 1
                    for frame in frames(buffer.rpartition(b"\n\n")[0] + b"\n\n"):
                        if frame.get("event") == "run.started":
                            run_ids.append(json.loads(frame.get("data", "{}"))["run_id"])
                    if streaming == n:
                        all_streaming.set()

    limits = httpx.Limits(max_connections=2 * n + 8, max_keepalive_connections=2 * n + 8)
    timeout = httpx.Timeout(120.0, connect=60.0, pool=60.0)
    async with httpx.AsyncClient(limits=limits, timeout=timeout, headers=server.headers) as client:
        tasks = [asyncio.create_task(chat(client)) for _ in range(n)]
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(all_streaming.wait(), settle)
        await asyncio.sleep(0.3)
        rss = status_kib(runtime)
        health = await asyncio.to_thread(server.health)
        live = int((health.get("runs") or {}).get("live", 0))
        seen = streaming
        cancel = f"{server.url}/resolve/api/runs/{{}}/cancel"
        await asyncio.gather(
            *(client.post(cancel.format(run_id)) for run_id in run_ids), return_exceptions=True
        )
        _, pending = await asyncio.wait(tasks, timeout=15)
        for task in pending:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return rss, live, seen


def slow_server(ctx: Context) -> JupyterServer:
    """A server of its own on a fake whose answers stall after their first word (the fake
    lives until the run ends)."""
    from .servers import FakeProvider, JupyterServer

    scenario = ctx.tmp() / "slow.json"
    scenario.write_text(json.dumps(slow_scenario(120.0)))  # cancelled once measured
    fake = ctx.stack.enter_context(FakeProvider(ctx.repo, scenario_file=scenario))
    return JupyterServer(ctx.repo, fake.base_url)


def spawn_slow_server(ctx: Context) -> None:
    ctx.spawn("slow", lambda: slow_server(ctx))


def runtime_rss_per_run(ctx: Context) -> list[Figure]:
    """Runtime RSS with N runs live at once (stalled mid-stream) minus idle, per run."""
    n = ctx.repeats(20, 100)
    settle = ctx.repeats(6, 15)
    with ctx.spawned("slow", lambda: slow_server(ctx)) as server:
        runtime = server.runtime_pid()
        warm = server.http
        assert warm is not None
        body = {"messages": [{"role": "user", "content": "warm up"}]}
        response = warm.post(f"{server.url}/resolve/api/chat", json=body, timeout=60)
        if response.status_code != 200 or b"run.completed" not in response.content:
            raise BenchError(f"the warm-up chat failed: HTTP {response.status_code}")
        time.sleep(0.3)
        idle = status_kib(runtime)
        loaded, live, seen = asyncio.run(_hold_runs(server, n, runtime, float(settle)))
    if live <= 0:
        raise BenchError(f"no run was live when the runtime was measured ({seen} streaming)")
    ctx.log(f"rss per run: {live} live ({seen} streaming), {idle:.0f} → {loaded:.0f} KiB")
    return [
        Figure(
            "runtime_rss_per_run_kib",
            (loaded - idle) / live,
            "KiB",
            Goal(RUN_GOAL_KIB),
            note=f"{live} runs live at once, stalled mid-stream; (VmRSS - idle) / runs",
        ),
        Figure("runtime_rss_loaded_kib", loaded, "KiB", note=f"{live} runs live"),
        Figure("runtime_rss_before_runs_kib", idle, "KiB", note="baseline: idle after a warm-up"),
    ]
