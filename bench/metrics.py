"""The registry: every metric, in the order a run measures them.

To add one, write a function ``(Context) -> list[Figure]`` (in a module of its own or an existing
one) and add it here; ``python -m bench --only NAME`` then runs it alone. Order matters where a
metric observes state another changes (fresh memory before the chats, idle memory after).

``SPAWNS`` names, per metric, what starts each server it needs: the run calls them all, for the
selected metrics, before the first of those metrics (after the import and magics figures, which
want a quiet machine), so the servers start side by side rather than one after another.
"""

from __future__ import annotations

from collections.abc import Callable

from . import (
    chain,
    completion,
    concurrency,
    context,
    cpu,
    footprint,
    local_model,
    magics,
    prefix_cache,
    run_index,
    run_start,
    tools,
)
from .core import Context, Figure

Metric = Callable[[Context], list[Figure]]
Spawn = Callable[[Context], None]

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
    "run_index": run_index.run_index,
    "prefix_cache": prefix_cache.prefix_cache,
    "local_model": local_model.local_model,
    "completion": completion.completion_overhead,
}

SPAWNS: dict[str, tuple[Spawn, ...]] = {  # called in this order: those needing no fake first
    "tool_roundtrip": (tools.spawn_tools_server,),
    "concurrency": (Context.spawn_scripted,),
    "cpu": (Context.spawn_scripted, Context.spawn_main),
    "runtime_rss_fresh": (Context.spawn_main,),
    "chain": (Context.spawn_main,),
    "completion": (Context.spawn_main,),
    "runtime_rss_idle": (Context.spawn_main,),
    "runtime_rss_per_run": (footprint.spawn_slow_server,),
    "run_index": (run_index.spawn_servers,),
}
