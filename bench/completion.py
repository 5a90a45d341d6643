"""Inline completion (issue 35.6): ``completion_overhead_ms``, the gateway's added latency over
the provider alone, in the same run.

The main server (provider ``openai`` on the fake) is asked ``POST /resolve/api/completion``
with a model of the ``suffix`` family, and the same fake is asked ``POST /v1/completions``
straight with the body the gateway sends; each pair is timed back to back with kept-alive
clients, and the figure is the p50 (and p99) of the paired differences.
"""

from __future__ import annotations

import time
from typing import Any

import httpx

from .core import BenchError, Context, Figure, Goal, median, percentile

PREFIX = "import numpy as np\nimport "
MODEL = "fake-coder"  # auto style: suffix (the legacy /v1/completions)


def _timed(client: httpx.Client, url: str, body: dict[str, Any], headers: dict[str, str]) -> float:
    started = time.perf_counter()
    response = client.post(url, json=body, headers=headers)
    elapsed = time.perf_counter() - started
    if response.status_code != 200:
        raise BenchError(f"{url} answered {response.status_code}: {response.text[:200]}")
    return elapsed


def completion_overhead(ctx: Context) -> list[Figure]:
    server = ctx.server()
    fake = ctx.fake()
    chain_url = f"{server.url}/resolve/api/completion"
    chain_body = {"prefix": PREFIX, "suffix": "", "model": MODEL, "cell_id": "bench"}
    direct_url = f"{fake.base_url}/completions"
    direct_body = {"model": MODEL, "prompt": PREFIX, "suffix": "", "max_tokens": 96}
    n = ctx.repeats(50, 300)
    diffs: list[float] = []
    chains: list[float] = []
    with httpx.Client(timeout=30) as gateway, httpx.Client(timeout=30) as straight:
        first = gateway.post(chain_url, json=chain_body, headers=server.headers)
        if first.status_code != 200:
            raise BenchError(f"{chain_url} answered {first.status_code}: {first.text[:200]}")
        answer = first.json()
        if not answer.get("items"):
            raise BenchError(f"the completion through the gateway is empty: {answer}")
        _timed(straight, direct_url, direct_body, {})
        for _ in range(n):
            direct = _timed(straight, direct_url, direct_body, {})
            chain = _timed(gateway, chain_url, chain_body, server.headers)
            diffs.append(1000 * (chain - direct))
            chains.append(1000 * chain)
    return [
        Figure("completion_overhead_ms", round(median(diffs), 2), "ms", Goal(3.0)),
        Figure("completion_overhead_p99_ms", round(percentile(diffs, 0.99), 2), "ms"),
        Figure("completion_chain_ms", round(median(chains), 2), "ms"),
    ]
