"""The registry: every metric, in the order a run measures them.

To add one, write a function ``(Context) -> list[Figure]`` (in a module of its own or an existing
one) and add it here; ``python -m bench --only NAME`` then runs it alone. Order matters where a
metric observes state another changes (fresh memory before the chats, idle memory after).

``SPAWNS`` names, per metric, what starts each server it needs: the run calls them all, for the
selected metrics, before the first of those metrics (after the import and magics figures, which
want a quiet machine), so the servers start side by side rather than one after another.

``GATES`` names the figures a comparison (``python -m bench --compare``, ``make test``) fails on
when this tree's is past the threshold ratio of the base's, each with the metric that measures
it and its noise on a shared machine (two medians closer than that are never a regression). A
figure read against a floor names it in its :class:`Figure` (``floor=``); the table prints both.

A metric of its own (the hub service's, the local model's, ...): a module ``bench/<name>.py``
with ``def <name>(ctx: Context) -> list[Figure]``, one line in ``METRICS``, and, when it needs a
server the run should start early, in ``SPAWNS``; a line in ``GATES`` makes a comparison fail on
it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from . import (
    chain,
    completion,
    concurrency,
    context,
    cpu,
    footprint,
    ghost_text,
    hub_service,
    local_model,
    local_tools,
    magics,
    prefix_cache,
    run_index,
    run_start,
    server_start,
    tools,
)
from .core import Context, Figure

Metric = Callable[[Context], list[Figure]]
Spawn = Callable[[Context], None]

METRICS: dict[str, Metric] = {
    "server_start": server_start.server_start,  # first: on a machine the bench keeps quiet
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
    "local_tools": local_tools.local_tools,  # heavy: in quick mode only when named
    "completion": completion.completion_overhead,
    "hub_service": hub_service.hub_service,
    "ghost_text": ghost_text.ghost_text,  # last: a JupyterLab and chromium of its own
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


# Metrics that import the measured jupyter_resolve into the bench's own process: a comparison
# runs them in a process per side (bench/compare.py), the others with both sides in one
# (bench/interleave.py).
IN_PROCESS = frozenset({"run_start", "context", "prefix_cache", "run_index"})


@dataclass(frozen=True)
class Gate:
    """A figure a comparison fails on: measured by ``metric``; lower is better."""

    metric: str
    slack: float  # in the figure's unit: two medians closer than this are noise


GATES: dict[str, Gate] = {
    "chain_first_token_overhead_ms": Gate("chain", 1.0),
    "gateway_cpu_per_run_start_ms": Gate("run_start", 0.05),
    "tool_roundtrip_p50_ms": Gate("tool_roundtrip", 2.0),
    "concurrent_100_first_token_p50_ms": Gate("concurrency", 40.0),
    "completion_overhead_ms": Gate("completion", 0.5),
    # server start: what loading the extension adds, timed inside a fresh interpreter (a
    # server's start to listening swings by a second at load; server_start_* show it)
    "extension_load_ms": Gate("extension_import", 100.0),
}
