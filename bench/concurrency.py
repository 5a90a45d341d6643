"""Many simultaneous chats through one gateway (provider ``scripted``, a short answer).

N chats start at once, each on a connection of its own (:mod:`bench.lean_client`: its cost per
chat is small and does not grow with N, as for a burst from many clients). A chat is an error
when its HTTP status is not 200, it fails in transit, its stream has no ``run.completed`` (or a
``run.error``), or its event ids do not increase.
Times are from the start of the burst: to the first ``text.delta`` and to ``run.completed``.
The gateway's and the runtime's RSS are sampled every 20 ms during the burst (peak); their CPU
time is read from ``/proc`` before and after, and the bench's own (the client's) CPU time too.

Baseline, on the same server just before: one chat at a time (median of a few) for the times,
the idle RSS of both processes for the memory.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import httpx

from .chain import frames
from .core import BenchError, Context, Figure, Goal, median, percentile
from .floor import floor_bursts
from .lean_client import HTTPStatusError, stream_post
from .proc import cpu_seconds, status_kib

if TYPE_CHECKING:
    from .servers import JupyterServer

ANSWER = "A short scripted answer, the same for every chat."


@dataclass
class Chat:
    first_s: float | None = None
    done_s: float | None = None
    error: str = ""


# issue 21's goals for the first token of N chats started at once (the quick run's 200: none)
FIRST_TOKEN_GOALS = {100: Goal(150.0), 500: Goal(1000.0)}


async def one_chat(url: str, headers: dict[str, str], start: float) -> Chat:
    chat = Chat()
    body = json.dumps({"messages": [{"role": "user", "content": "hi"}]}).encode()
    last_id = 0
    try:
        buffer = b""
        async for data in stream_post(url, headers, body):
            now = time.perf_counter()
            complete, _, buffer = (buffer + data).rpartition(b"\n\n")
            for frame in frames(complete + b"\n\n") if complete else []:
                if "id" in frame:
                    seq = int(frame["id"])
                    if seq <= last_id:
                        chat.error = f"event id {seq} after {last_id}"
                    last_id = seq
                event = frame.get("event")
                if event == "text.delta" and chat.first_s is None:
                    chat.first_s = now - start
                elif event == "run.error":
                    chat.error = chat.error or f"run.error: {frame.get('data', '')[:200]}"
                elif event == "run.completed":
                    chat.done_s = now - start
    except (HTTPStatusError, ValueError, OSError, EOFError, asyncio.LimitOverrunError) as exc:
        chat.error = f"{type(exc).__name__}: {exc}"
    if not chat.error and chat.done_s is None:
        chat.error = "no run.completed"
    return chat


async def _sample_rss(
    pids: dict[str, int], peaks: dict[str, float], gone: set[str], stop: asyncio.Event
) -> None:
    while not stop.is_set():
        for name, pid in pids.items():
            if name in gone:
                continue
            try:
                peaks[name] = max(peaks.get(name, 0.0), status_kib(pid))
            except BenchError:
                gone.add(name)  # the process exited during the burst
        try:
            await asyncio.wait_for(stop.wait(), 0.02)
        except asyncio.TimeoutError:
            pass


async def burst(
    url: str, headers: dict[str, str], n: int, pids: dict[str, int], gone: set[str]
) -> tuple[list[Chat], dict[str, float]]:
    peaks: dict[str, float] = {}
    stop = asyncio.Event()
    sampler = asyncio.create_task(_sample_rss(pids, peaks, gone, stop))
    start = time.perf_counter()
    chats = await asyncio.gather(*(one_chat(url, headers, start) for _ in range(n)))
    stop.set()
    await sampler
    return list(chats), peaks


def concurrency(ctx: Context) -> list[Figure]:
    server = ctx.scripted([{"content": ANSWER}])
    url = f"{server.url}/resolve/api/chat"
    pids = {"gateway": server.pid, "runtime": server.runtime_pid()}
    figures: list[Figure] = []

    singles = [asyncio.run(burst(url, server.headers, 1, pids, set()))[0][0] for _ in range(4)][1:]
    bad = [c.error for c in singles if c.error]
    if bad:
        raise BenchError(f"a single scripted chat failed: {bad[0]}")
    figures += [
        Figure(
            "concurrent_1_first_token_ms",
            median([c.first_s or 0 for c in singles]) * 1e3,
            "ms",
            note="baseline: one chat at a time, median of 3",
        ),
        Figure(
            "concurrent_1_completion_ms",
            median([c.done_s or 0 for c in singles]) * 1e3,
            "ms",
            note="baseline: one chat at a time, median of 3",
        ),
    ]
    idle = {name: status_kib(pid) for name, pid in pids.items()}
    figures += [
        Figure(f"{name}_rss_before_burst_kib", idle[name], "KiB", note="baseline") for name in pids
    ]

    for n in (100,) if ctx.quick else (100, 500):
        pids = {"gateway": server.pid, "runtime": server.runtime_pid()}  # after any restart
        cpu0 = {name: cpu_seconds(pid) for name, pid in pids.items()}
        client_cpu = time.process_time()
        gone: set[str] = set()
        wall = time.perf_counter()
        chats, peaks = asyncio.run(burst(url, server.headers, n, pids, gone))
        wall = time.perf_counter() - wall
        client_cpu = time.process_time() - client_cpu
        gone |= {name for name, pid in pids.items() if not Path(f"/proc/{pid}").exists()}
        cpu = {
            name: cpu_seconds(pid) - cpu0[name] for name, pid in pids.items() if name not in gone
        }
        errors = [c.error for c in chats if c.error]
        died = ""
        if gone:
            which = ", ".join(f"{g} (pid {pids[g]})" for g in sorted(gone))
            died = f"{which} exited during the burst"
            ctx.log(f"concurrency: {died}; server log:\n{server.log_tail(15)}")
            _wait_runtime_back(server)
        ctx.log(
            f"concurrency: {n} chats in {wall:.1f} s, {len(errors)} errors"
            + (f" (first: {errors[0]})" if errors else "")
        )
        ok = [c for c in chats if not c.error]
        firsts = [c.first_s * 1e3 for c in ok if c.first_s is not None]
        dones = [c.done_s * 1e3 for c in ok if c.done_s is not None]
        p = f"concurrent_{n}"
        note = "; ".join(x for x in (died, errors[0][:200] if errors else "") if x)
        figures.append(Figure(f"{p}_errors", len(errors), "", Goal(0), note=note))
        if firsts and dones:
            figures += [
                Figure(
                    f"{p}_first_token_p50_ms",
                    percentile(firsts, 0.5),
                    "ms",
                    FIRST_TOKEN_GOALS.get(n),
                ),
                Figure(f"{p}_first_token_p99_ms", percentile(firsts, 0.99), "ms"),
                Figure(f"{p}_completion_p50_ms", percentile(dones, 0.5), "ms"),
                Figure(f"{p}_completion_p99_ms", percentile(dones, 0.99), "ms"),
            ]
        for name in pids:
            suffix = " (until it exited)" if name in gone else ""
            figures.append(
                Figure(
                    f"{p}_{name}_rss_peak_kib",
                    peaks.get(name, 0.0),
                    "KiB",
                    note="sampled every 20 ms" + suffix,
                )
            )
            if name in cpu:
                figures.append(Figure(f"{p}_{name}_cpu_s", cpu[name], "s"))
        figures.append(
            Figure(f"{p}_client_cpu_s", client_cpu, "s", note="the bench's, on the same cores")
        )
        if "gateway" in cpu:
            figures.append(Figure(f"{p}_gateway_cpu_per_chat_ms", cpu["gateway"] / n * 1e3, "ms"))
        figures += floor_bursts(server, n, one_chat)
    return figures


def _wait_runtime_back(server: JupyterServer, timeout: float = 30.0) -> None:
    """After the runtime died, wait for the gateway to restart it (the next burst needs it)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            runtime = server.health().get("runtime") or {}
        except (BenchError, httpx.HTTPError):
            runtime = {}
        if runtime.get("state") == "running" and runtime.get("pid"):
            return
        time.sleep(0.2)
