"""Footprint: the runtime's resident memory, and the extension's import time.

``runtime_rss_*`` read ``/proc/<pid>/status`` of the agent-httpd the gateway runs (its pid from
``/resolve/api/health``). ``extension_import_ms`` is the wall time of a fresh interpreter that
imports ``jupyter_resolve.extension`` minus that of one that does nothing (``-c pass``), runs
alternating, medians of each.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from .core import BenchError, Context, Figure, Goal, median

IMPORT_GOAL_MS = 150.0
RSS_GOAL_KIB = 4096.0
QUICK_BUDGET_S = 12.0  # --quick starts no new import round after this long


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


def _wall(code: str, cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, check=False
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise BenchError(f"python -c {code!r} failed:\n{done.stderr.decode(errors='replace')}")
    return elapsed * 1e3


def extension_import(ctx: Context) -> list[Figure]:
    runs = ctx.repeats(3, 5)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ctx.repo), env.get("PYTHONPATH", "")) if p)
    env.pop("PYTHONSTARTUP", None)
    codes = {"pass": "pass", "extension": "import jupyter_resolve.extension"}
    if not ctx.quick:  # the part of the import that is jupyter_server's (context, not a goal)
        codes["server"] = "import jupyter_server.extension.application"
    times: dict[str, list[float]] = {name: [] for name in codes}
    started = time.monotonic()
    for i in range(runs + (0 if ctx.quick else 1)):  # a warm-up round writes bytecode
        if ctx.quick and i > 0 and time.monotonic() - started > QUICK_BUDGET_S:
            break  # a loaded machine: keep --quick quick, with fewer samples
        for name, code in codes.items():
            wall = _wall(code, ctx.repo, env)
            if ctx.quick or i > 0:
                times[name].append(wall)
    runs = len(times["extension"])
    bare = median(times["pass"])
    figures = [
        Figure(
            "extension_import_ms",
            median(times["extension"]) - bare,
            "ms",
            Goal(IMPORT_GOAL_MS),
            note=f"median of {runs}, minus bare interpreter start",
        ),
        Figure("python_startup_ms", bare, "ms", note="python -c pass"),
    ]
    if "server" in times:
        server = median(times["server"]) - bare
        own = median(times["extension"]) - median(times["server"])
        figures[1:1] = [
            Figure("jupyter_server_import_ms", server, "ms", note="jupyter_server alone"),
            Figure("extension_own_import_ms", own, "ms", note="extension minus jupyter_server"),
        ]
    return figures
