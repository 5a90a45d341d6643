"""Run logs made up for tests and the bench: many finished runs, written straight to
``.resolve/runs/`` as a server would have left them (a ``run.started`` line, a ``usage`` line and
a ``run.completed`` line each), without running them."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Made:
    """What :func:`write_run_logs` wrote: run ``i`` is ``run_id(i)``, started at
    ``started(i)``, in session ``session(i)``; every ``peer_every``-th run is ``peer``'s."""

    count: int
    base: float
    sessions: int
    peer: str
    peer_every: int

    def run_id(self, i: int) -> str:
        return f"run-made-{i:06d}"

    def session(self, i: int) -> str:
        return f"s-made-{i % self.sessions:05d}"

    def started(self, i: int) -> float:
        return self.base + i * 10.0

    def of_peer(self, i: int) -> bool:
        return i % self.peer_every == 0

    def peer_runs(self) -> int:
        return len(range(0, self.count, self.peer_every))


def line(seq: int, kind: str, data: Mapping[str, Any], ts: float) -> str:
    record = {"seq": seq, "type": kind, "data": data, "ts": ts}
    return json.dumps(record, separators=(",", ":")) + "\n"


def write_run_logs(
    state_dir: Path,
    count: int,
    *,
    sessions: int = 1000,
    peer: str = "alpha",
    peer_every: int = 50,
    age_days: float = 0.0,
) -> Made:
    """Write ``count`` finished runs' logs under ``state_dir/runs``, the newest ``age_days``
    old; run ``i`` started ``10 * i`` seconds after the first."""
    runs_dir = state_dir / "runs"
    runs_dir.mkdir(parents=True, exist_ok=True)
    base = time.time() - age_days * 86400 - count * 10.0
    made = Made(count, base, sessions, peer, peer_every)
    for i in range(count):
        run_id, ts = made.run_id(i), made.started(i)
        started: dict[str, Any] = {
            "run_id": run_id,
            "session_id": made.session(i),
            "prompt": f"question {i}",
            "soul": None,
            "model": "scripted",
            "budget": {"rounds": 8},
            "tools": [],
            "peer": peer if made.of_peer(i) else None,
            "parent": None,
            "task_id": None,
        }
        usage = {"run_id": run_id, "prompt_tokens": 100, "completion_tokens": 20}
        text = {"run_id": run_id, "text": f"answer {i}"}
        completed = {"run_id": run_id, "reason": "stop", "rounds": 1}
        (runs_dir / f"{run_id}.jsonl").write_text(
            line(1, "run.started", started, ts)
            + line(2, "text.delta", text, ts + 1)
            + line(3, "usage", usage, ts + 1)
            + line(4, "run.completed", completed, ts + 2)
        )
    return made
