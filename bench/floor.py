"""The floor under a chat: what jupyter_server and tornado cost before any of ours runs.

Measured side by side with the chain, on the same server (``bench/floor_extension.py``, loaded
by every server the bench starts): a no-op streamed POST that is authenticated and authorized
as the chat is, and the same no-op on a bare tornado listener (no Jupyter: what the runtime's
inference request meets at least). Issue 21's goals for the first token and for bursts are
read against these: a chat is one such public request, one such bare request (the runtime's
call for inference) and our work between them.

- :func:`floor_url` and :func:`bare_url` are the two no-ops; the chain times them beside its
  samples (``bench/chain.py``).
- :func:`floor_bursts` sends the same burst of N to the no-op, to the bare no-op, and as pairs
  (the no-op, then the bare one: the two requests of a chat with none of our work), with the
  client the chats' burst used (``bench/concurrency.py`` hands it in).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Protocol

import httpx

from .core import BenchError, Figure, Goal, percentile
from .proc import cpu_seconds

if TYPE_CHECKING:
    from .servers import JupyterServer


class Outcome(Protocol):
    """What one streamed request came to: its first event's time from the burst's start."""

    first_s: float | None
    error: str


OneStream = Callable[[str, dict[str, str], float], Awaitable[Outcome]]

FLOOR_PATH = "/resolve-bench/floor"


def floor_url(server: JupyterServer) -> str:
    """The authenticated no-op of ``server``."""
    return f"{server.url}{FLOOR_PATH}"


def bare_url(server: JupyterServer) -> str:
    """The bare tornado no-op in ``server``'s process (its port from the authenticated GET)."""
    response = httpx.get(floor_url(server), headers=server.headers, timeout=10.0)
    if response.status_code != 200:
        raise BenchError(
            f"GET {FLOOR_PATH}: HTTP {response.status_code} (is bench.floor_extension loaded?)"
        )
    return f"http://127.0.0.1:{int(response.json()['bare_port'])}/floor"


async def _burst(n: int, one: Callable[[float], Awaitable[Outcome]]) -> list[Outcome]:
    start = time.perf_counter()
    return list(await asyncio.gather(*(one(start) for _ in range(n))))


def floor_bursts(server: JupyterServer, n: int, stream: OneStream) -> list[Figure]:
    """Bursts of ``n`` no-op streams, each request made with ``stream``: at the Jupyter floor,
    at the bare floor, and of pairs (each the Jupyter no-op then the bare one: the two requests
    a chat makes of the gateway's event loop, the client's and the runtime's, with none of our
    work). A failed request is counted in ``<name>_concurrent_<n>_errors``, as a chat is."""
    floor, bare, headers = floor_url(server), bare_url(server), server.headers

    async def pair(start: float) -> Outcome:
        first = await stream(floor, headers, start)
        return first if first.error else await stream(bare, {}, start)

    bursts: dict[str, Callable[[float], Awaitable[Outcome]]] = {
        "floor": lambda start: stream(floor, headers, start),
        "bare_floor": lambda start: stream(bare, {}, start),
        "pair_floor": pair,
    }
    figures: list[Figure] = []
    for name, one in bursts.items():
        cpu = cpu_seconds(server.pid)
        chats = asyncio.run(_burst(n, one))
        cpu = cpu_seconds(server.pid) - cpu
        errors = [c.error for c in chats if c.error]
        p = f"{name}_concurrent_{n}"
        note = errors[0][:200] if errors else ""
        figures.append(Figure(f"{p}_errors", len(errors), "", Goal(0), note=note))
        firsts = [c.first_s * 1e3 for c in chats if not c.error and c.first_s is not None]
        if not firsts:
            continue
        figures += [
            Figure(f"{p}_first_event_p50_ms", percentile(firsts, 0.5), "ms"),
            Figure(f"{p}_first_event_p99_ms", percentile(firsts, 0.99), "ms"),
            Figure(
                f"{p}_cpu_per_request_ms",
                cpu / n * 1e3,
                "ms",
                note="the gateway process's CPU for the burst, over n (per pair for pairs)",
            ),
        ]
    return figures
