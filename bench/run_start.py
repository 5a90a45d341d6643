"""Gateway CPU per run start: what the gateway spends before a run's request goes to the runtime.

``gateway_cpu_per_run_start_ms``: in this process, a real :class:`jupyter_resolve.gateway.Gateway`
(provider ``scripted``, the runtime not started) parses a chat body (``ChatRequest``) and starts
a run for a new session (``Gateway.start_chat``: soul, tools, context assembly, the manifest,
the run log and ``run.started``; its folder on tmpfs when there is one), timed with the process
CPU clock; median over 200 starts
(quick) / 1,000 (full) after 20 warm-up starts. The run's drive task — the runtime and the
stream — is not part of it (it never runs: the starts are timed back to back, then cancelled).
Baseline: ``chat_request_parse_ms``, parsing the same body alone.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import tempfile
import time
from pathlib import Path

from .core import Context, Figure, Goal, median

GOAL_MS = 1.0
WARM_UP = 20


def run_start(ctx: Context) -> list[Figure]:
    from jupyter_resolve.config import Resolve
    from jupyter_resolve.contracts.bodies import ChatRequest
    from jupyter_resolve.gateway import Gateway

    # on tmpfs where there is one: the run log's open on this VM's ext4 took 40 to 400 µs
    # from one hour to the next (its journal), which is the disk's state, not the gateway's work
    shm = Path("/dev/shm")
    where = str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None
    folder = Path(tempfile.mkdtemp(prefix="resolve-bench-start-", dir=where))
    ctx.stack.callback(shutil.rmtree, folder, ignore_errors=True)
    script = folder / "script.jsonl"
    script.write_text('{"content": "ok"}\n')
    config = Resolve(provider="scripted", script=str(script), state_dir=str(folder / ".resolve"))
    gateway = Gateway(config, root_dir=folder, log=logging.getLogger("bench.run_start"))
    count = ctx.repeats(200, 1000)

    async def starts() -> tuple[list[float], list[float]]:
        starting, parsing = [], []
        runs = []
        for i in range(WARM_UP + count):
            body = {"messages": [{"role": "user", "content": f"Question {i}: what is in data/?"}]}
            begun = time.process_time()
            request = ChatRequest.model_validate(body)
            parsed = time.process_time()
            runs.append(gateway.start_chat(request))
            ended = time.process_time()
            if i >= WARM_UP:
                parsing.append((parsed - begun) * 1e3)
                starting.append((ended - begun) * 1e3)
        for run in runs:
            if run.task is not None:
                run.task.cancel()
        await asyncio.gather(*(r.task for r in runs if r.task is not None), return_exceptions=True)
        return starting, parsing

    starting, parsing = asyncio.run(starts())
    ctx.log(f"run start: {count} starts, median {median(starting):.3f} ms of CPU")
    return [
        Figure("gateway_cpu_per_run_start_ms", median(starting), "ms", Goal(GOAL_MS)),
        Figure("chat_request_parse_ms", median(parsing), "ms", note="baseline: the body alone"),
    ]
