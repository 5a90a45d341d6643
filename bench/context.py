"""Context assembly for a long session (DESIGN 9.1): the pure fit of a 200-turn transcript.

``context_assembly_ms``: :func:`jupyter_resolve.contracts.chat_body.assemble_chat` for a session
of 200 turns (each a prompt, a python call whose output is 5,000 characters, the answer) at the
default window (128k: old outputs elided until it fits), median of repeated runs in this
process. ``context_assembly_tight_ms``: the same at an 8k window (every output elided, then the
oldest turns dropped). Baseline: ``context_fold_ms``, folding the same 200 run logs' events
into the transcript (what the gateway caches per finished run).
"""

from __future__ import annotations

import time
from typing import Any

from jupyter_resolve.contracts.bodies import ChatRequest, Event
from jupyter_resolve.contracts.chat_body import assemble_chat
from jupyter_resolve.contracts.transcript import fold_session

from .core import BenchError, Context, Figure, Goal, median

TURNS = 200
OUTPUT_CHARS = 5_000
GOAL_MS = 5.0


def _run(n: int) -> list[Event]:
    call = f"call{n}"
    output = f"wrote out/table{n}.csv\n" + "x" * OUTPUT_CHARS
    raw: list[tuple[str, dict[str, Any]]] = [
        ("run.started", {"session_id": "s", "prompt": f"question {n}"}),
        ("text.delta", {"text": "Let me look."}),
        ("tool.requested", {"call_id": call, "name": "python", "arguments": {"code": "1"}}),
        ("tool.completed", {"call_id": call, "name": "python", "ok": True, "output": output}),
        ("text.delta", {"text": f"answer {n}"}),
        ("run.completed", {"reason": "stop", "rounds": 2}),
    ]
    return [Event(seq=i + 1, type=t, data={"run_id": f"r{n}", **d}) for i, (t, d) in enumerate(raw)]


def _timed(fn: Any, repeats: int) -> float:
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) * 1e3)
    return median(samples)


def context_assembly(ctx: Context) -> list[Figure]:
    runs = [_run(n) for n in range(TURNS)]
    transcript = fold_session(runs)
    request = ChatRequest.model_validate({"messages": [{"role": "user", "content": "next?"}]})
    repeats = ctx.repeats(20, 100)

    def assemble(window: int) -> Any:
        _body, assembly = assemble_chat(
            request,
            run_id="r",
            model="gpt-4o",
            tools=[],
            discipline="D",
            transcript=transcript,
            window=window,
        )
        return assembly

    if assemble(8_000).compacted is None:
        raise BenchError("the 200-turn session was not compacted at 8k tokens")
    return [
        Figure("context_assembly_ms", _timed(lambda: assemble(0), repeats), "ms", Goal(GOAL_MS)),
        Figure("context_assembly_tight_ms", _timed(lambda: assemble(8_000), repeats), "ms"),
        Figure("context_fold_ms", _timed(lambda: fold_session(runs), repeats), "ms"),
    ]
