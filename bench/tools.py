"""Tool round trip: a trivial ``python`` call through runtime → gateway → scratch kernel → back.

Measured at the client as the time from ``tool.requested`` to ``tool.completed`` for ``1 + 1``
(the first call of the session, which starts the kernel, is left out). The scripted model makes
the calls, so no provider time is inside the figure.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

import httpx

from .chain import frames
from .core import BenchError, Context, Figure, Goal, median, percentile

if TYPE_CHECKING:
    from .servers import JupyterServer


def calls(ctx: Context) -> int:
    return ctx.repeats(20, 60)  # one run: rounds are capped at 64


def tools_server(ctx: Context) -> JupyterServer:
    """A server of its own whose scripted model calls ``python`` ``calls(ctx) + 1`` times."""
    from .servers import JupyterServer

    n = calls(ctx)
    folder = Path(tempfile.mkdtemp(prefix="resolve-bench-tools-", dir=ctx.tmp()))
    script = folder / "script.jsonl"
    turn = {"content": "", "tool_calls": [{"name": "python", "arguments": {"code": "1 + 1"}}]}
    script.write_text("".join(json.dumps(turn) + "\n" for _ in range(n + 1)))
    args = (
        "--Resolve.provider=scripted",
        f"--Resolve.script={script}",
        f"--Resolve.max_rounds={min(n + 2, 64)}",
        f"--Resolve.max_tool_calls={n + 2}",
    )
    return JupyterServer(ctx.repo, "http://127.0.0.1:9/v1", extra_args=args)


def spawn_tools_server(ctx: Context) -> None:
    ctx.spawn("tools", lambda: tools_server(ctx))


def tool_roundtrip(ctx: Context) -> list[Figure]:
    samples: list[float] = []
    with ctx.spawned("tools", lambda: tools_server(ctx)) as server:
        body = {"messages": [{"role": "user", "content": "go"}], "session_id": "bench-tools"}
        requested: dict[str, float] = {}
        buffer = b""
        with httpx.stream(
            "POST",
            f"{server.url}/resolve/api/chat",
            json=body,
            headers=server.headers,
            timeout=300,
        ) as response:
            for data in response.iter_bytes():
                now = time.perf_counter()
                complete, _, buffer = (buffer + data).rpartition(b"\n\n")
                for frame in frames(complete + b"\n\n") if complete else []:
                    event, payload = frame.get("event"), json.loads(frame.get("data", "{}"))
                    if event == "tool.requested":
                        requested[payload["call_id"]] = now
                    elif event == "tool.completed" and payload["call_id"] in requested:
                        if not payload["ok"]:
                            raise BenchError(f"python call failed: {payload['output']}")
                        samples.append((now - requested[payload["call_id"]]) * 1e3)
    samples = samples[1:]  # the first call starts the kernel
    if not samples:
        raise BenchError("no tool call completed")
    ctx.log(f"tools: {len(samples)} python calls, median {median(samples):.2f} ms")
    return [
        Figure("tool_roundtrip_p50_ms", percentile(samples, 0.5), "ms", Goal(5.0)),
        Figure("tool_roundtrip_p99_ms", percentile(samples, 0.99), "ms"),
    ]
