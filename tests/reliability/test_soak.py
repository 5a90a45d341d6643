"""Many concurrent streams: every sequence complete and ordered, nothing lost (issue 10).

200 clients chat at once, again and again, for ``RESOLVE_SOAK_SECONDS`` (60 by default; the
loop is bounded in count and time and stops by itself).
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

import httpx

from tests.conftest import Server

CLIENTS = 200
SECONDS = float(os.environ.get("RESOLVE_SOAK_SECONDS", "60"))
MAX_ROUNDS_PER_CLIENT = 1000


async def test_200_concurrent_streams_stay_complete_and_ordered(
    server: Server, gateway: Any
) -> None:
    await gateway.start()
    deadline = time.monotonic() + SECONDS
    problems: list[str] = []
    completed = 0

    async def client(n: int) -> None:
        nonlocal completed
        for _ in range(MAX_ROUNDS_PER_CLIENT):
            if time.monotonic() > deadline:
                return
            stream = await server.chat(f"client {n}: hello")
            ids = [e.id for e in stream.events]
            types = stream.types()
            if stream.status != 200:
                problems.append(f"client {n}: HTTP {stream.status}")
            elif ids != list(range(1, len(ids) + 1)):
                problems.append(f"client {n}: ids {ids}")
            elif types[0] != "run.started" or types[-1] != "run.completed":
                problems.append(f"client {n}: {types[0]} … {types[-1]}")
            elif stream.of("run.completed")[0]["reason"] != "stop" or not stream.text():
                problems.append(f"client {n}: {stream.of('run.completed')}")
            else:
                completed += 1

    limits = httpx.Limits(max_connections=CLIENTS + 10, max_keepalive_connections=CLIENTS)
    async with server.client(limits=limits) as shared:
        server.shared = shared
        try:
            await asyncio.gather(*(client(n) for n in range(CLIENTS)))
        finally:
            server.shared = None
    assert not problems, problems[:5]
    assert completed >= CLIENTS
    assert (await server.get("/resolve/api/health")).json()["runtime"]["restarts"] == 0
