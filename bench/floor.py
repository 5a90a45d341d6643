"""The floor under a chat: what jupyter_server and tornado cost before any of ours runs.

Measured side by side with the chain, on the same server (``bench/floor_extension.py``, loaded
by every server the bench starts): a no-op streamed POST that is authenticated and authorized
as the chat is, and the same no-op on a bare tornado listener (no Jupyter: what the runtime's
inference request meets at least). Issue 21's goals for the first token and for bursts are
read against these: a chat is one such public request, one such bare request (the runtime's
call for inference) and our work between them.

- :func:`floor_first_event` times the no-op's first event beside a chain sample.
- :func:`floor_bursts` sends the same burst of N to the no-op, to the bare no-op, and as pairs
  (the no-op, then the bare one: the two requests of a chat with none of our work).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import httpx

from .core import BenchError, Figure, percentile
from .proc import cpu_seconds

if TYPE_CHECKING:
    from .chain import Sample
    from .concurrency import Chat
    from .servers import JupyterServer

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


def floor_first_event(
    client: httpx.Client, server: JupyterServer, bare: str
) -> tuple[Sample, Sample]:
    """One timed no-op stream on each floor (the caller pairs them with a straight stream)."""
    from .chain import resolve_text, timed_stream

    body = {"messages": [{"role": "user", "content": "hi"}]}
    floor = timed_stream(client, floor_url(server), body, resolve_text, server.headers)
    return floor, timed_stream(client, bare, body, resolve_text)


async def _pair(floor: str, headers: dict[str, str], bare: str, start: float) -> Chat:
    """The two requests every chat is, one after the other: the Jupyter no-op, then the bare."""
    from .concurrency import one_chat

    first = await one_chat(floor, headers, start)
    return first if first.error else await one_chat(bare, {}, start)


async def _burst(n: int, one: Callable[[float], Awaitable[Chat]]) -> list[Chat]:
    start = time.perf_counter()
    return list(await asyncio.gather(*(one(start) for _ in range(n))))


def floor_bursts(server: JupyterServer, n: int) -> list[Figure]:
    """Bursts of ``n`` no-op streams: at the Jupyter floor, at the bare floor, and of pairs
    (each chat the Jupyter no-op then the bare one: the two requests a chat makes of the
    gateway's event loop, the browser's and the runtime's, with none of our work)."""
    from .concurrency import one_chat

    floor, bare, headers = floor_url(server), bare_url(server), server.headers
    bursts: dict[str, Callable[[float], Awaitable[Chat]]] = {
        "floor": lambda start: one_chat(floor, headers, start),
        "bare_floor": lambda start: one_chat(bare, {}, start),
        "pair_floor": lambda start: _pair(floor, headers, bare, start),
    }
    figures: list[Figure] = []
    for name, one in bursts.items():
        cpu = cpu_seconds(server.pid)
        chats = asyncio.run(_burst(n, one))
        cpu = cpu_seconds(server.pid) - cpu
        errors = [c.error for c in chats if c.error]
        if errors:
            raise BenchError(f"{name}: {len(errors)} of {n} no-op streams failed: {errors[0]}")
        firsts = [c.first_s * 1e3 for c in chats if c.first_s is not None]
        p = f"{name}_concurrent_{n}"
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
