"""The registry: every metric, in the order a run measures them.

To add one, write a function ``(Context) -> list[Figure]`` (in a module of its own or an existing
one) and add it here; ``python -m bench --only NAME`` then runs it alone. Order matters where a
metric observes state another changes (fresh memory before the chats, idle memory after).
"""

from __future__ import annotations

from collections.abc import Callable

from . import chain, concurrency, context, cpu, footprint, magics, run_start, tools
from .core import Context, Figure

Metric = Callable[[Context], list[Figure]]

METRICS: dict[str, Metric] = {
    "extension_import": footprint.extension_import,
    "magics_import": magics.magics_import,
    "runtime_rss_fresh": footprint.runtime_rss_fresh,
    "chain": chain.chain_overhead,
    "cpu": cpu.cpu_per_chunks,
    "runtime_rss_idle": footprint.runtime_rss_idle,
    "tool_roundtrip": tools.tool_roundtrip,
    "concurrency": concurrency.concurrency,
    "runtime_rss_per_run": footprint.runtime_rss_per_run,
    "vs_jupyter_ai": magics.vs_jupyter_ai,
    "context": context.context_assembly,
    "run_start": run_start.run_start,
}
