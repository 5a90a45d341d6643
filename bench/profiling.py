"""``python -m bench --profile METRIC``: where the gateway's time goes while METRIC runs.

Every ``jupyter server`` the metric starts runs under cProfile (``bench/profiled_server.py``:
from the moment it is ready, start-up left out, until the bench stops it; the server's main
thread, the event loop, where the gateway runs), and the metric's own in-process work is
profiled too. The top functions by own time are printed;
the ``.prof`` files stay for ``python -m pstats`` or snakeviz.
"""

from __future__ import annotations

import io
import itertools
import os
import pstats
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from tests.launcher import JUPYTER_SERVER

from .profiled_server import profiler_for_clock

PROFILE_DIR_ENV = "RESOLVE_BENCH_PROFILE_DIR"
TOP = 25
_SERVERS = itertools.count(1)
T = TypeVar("T")
A = TypeVar("A")


def profile_dir() -> Path | None:
    """Where servers write their profiles, when a profile was asked for."""
    value = os.environ.get(PROFILE_DIR_ENV)
    return Path(value) if value else None


def server_module(name: str) -> list[str]:
    """How the interpreter runs ``jupyter_server``: under the profiler when profiling."""
    folder = profile_dir()
    if folder is None:
        return list(JUPYTER_SERVER)
    # a count, not the files there: servers started side by side write theirs only at exit
    return ["-m", "bench.profiled_server", str(folder / f"{name}-{next(_SERVERS)}.prof")]


def in_process(name: str, work: Callable[[A], T], arg: A) -> T:
    """``work(arg)``, under cProfile when profiling (its profile: ``bench-<name>.prof``)."""
    folder = profile_dir()
    if folder is None:
        return work(arg)
    profiler = profiler_for_clock()
    try:
        return profiler.runcall(work, arg)
    finally:
        profiler.dump_stats(folder / f"bench-{name}.prof")


def top(path: Path, limit: int = TOP) -> str:
    """The ``limit`` functions with the most own time in the profile at ``path``."""
    out = io.StringIO()
    stats = pstats.Stats(str(path), stream=out)
    stats.strip_dirs().sort_stats("tottime").print_stats(limit)
    lines = out.getvalue().splitlines()
    start = next((i for i, line in enumerate(lines) if "function calls" in line), 0)
    return "\n".join(line.rstrip() for line in lines[start:] if line.strip())


def report(folder: Path) -> str:
    """Each profile written in ``folder``, its path and its top."""
    parts = []
    for path in sorted(folder.glob("*.prof")):
        parts.append(f"== {path}\n{top(path)}")
    return "\n\n".join(parts) or f"no profile was written in {folder}"
