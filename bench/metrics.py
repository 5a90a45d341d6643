"""The registry: every metric, in the order a run measures them.

To add one, write a function ``(Context) -> list[Figure]`` (in a module of its own or an existing
one) and add it here; ``python -m bench --only NAME`` then runs it alone. Order matters where a
metric observes state another changes (fresh memory before the chats, idle memory after).
"""

from __future__ import annotations

from collections.abc import Callable

from . import chain, footprint, tools
from .core import Context, Figure

Metric = Callable[[Context], list[Figure]]

METRICS: dict[str, Metric] = {
    "extension_import": footprint.extension_import,
    "runtime_rss_fresh": footprint.runtime_rss_fresh,
    "chain": chain.chain_overhead,
    "runtime_rss_idle": footprint.runtime_rss_idle,
    "tool_roundtrip": tools.tool_roundtrip,
}
