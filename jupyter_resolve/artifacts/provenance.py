"""What produced an artifact, read from the run logs (DESIGN 3.6, 3.7): the run that asked, its
frozen start (model, soul, tools, context digest, owner), and the calls that made the result.

The logs are read here rather than through ``runs`` (which builds on this package), one
``{seq, type, data, ts}`` a line; a torn line is skipped. Nothing is written.

A *producing step* is a call that ran (it has a ``tool.started``) and may have changed the
session's scratch state, up to the call whose result became the artifact: ``python``,
``shell``, ``write_file``, ``edit_file``, and the producing call itself whatever its tool. The
steps are bounded (:data:`MAX_STEPS`, the latest kept) and so is the excerpt of each log.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from kernel_tools.schemas import load_tools

from ..contracts.ids import is_id
from .records import ArtifactManifest

# Calls that may change what later calls of the session see (its kernel, its work/ folder): the
# builtins that run in the kernel and execute or write, as their schemas say.
STATEFUL = frozenset(
    tool["name"]
    for tool in load_tools()
    if tool["runs_in"] == "kernel" and tool["effect"] in ("exec", "write")
)
MAX_STEPS = 200  # producing steps kept per artifact (the latest)
MAX_SESSION_RUNS = 500  # runs of a session looked at for a scratch file a person promoted
MAX_EXCERPT_TEXT = 4000  # characters of a call's output kept in a log excerpt
UNSAFE = re.compile(r"[^A-Za-z0-9._-]")

SessionRuns = Callable[[str], list[str]]
"""Takes a session id: its run ids, oldest first (the run index's; see :func:`scan_session`)."""


@dataclass
class Call:
    """One tool call of a run, as its log holds it."""

    call_id: str
    name: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)
    requested_seq: int = 0
    started_at: float | None = None
    completed: dict[str, Any] | None = None
    completed_at: float | None = None
    completed_seq: int = 0

    @property
    def slug(self) -> str:
        """The call id as it may stand in a crate's file names and ids: the model's provider
        chose it, so anything but letters, digits, ``.``, ``_`` and ``-`` becomes ``_``."""
        return UNSAFE.sub("_", self.call_id)[:128].lstrip(".") or "call"

    @property
    def ran(self) -> bool:
        return self.started_at is not None

    @property
    def code(self) -> str:
        """What the call ran: a python call's code, a shell call's command, else its
        arguments as JSON."""
        key = {"python": "code", "shell": "command"}.get(self.name)
        value = self.arguments.get(key) if key else None
        if isinstance(value, str):
            return value
        return json.dumps(self.arguments, indent=1, sort_keys=True, ensure_ascii=False)


@dataclass
class RunRecord:
    """A run's frozen start, its calls in order, and when it started and ended."""

    run_id: str
    started: dict[str, Any] = field(default_factory=dict)
    calls: dict[str, Call] = field(default_factory=dict)
    started_at: float | None = None
    ended_at: float | None = None
    reason: str | None = None
    lines: list[dict[str, Any]] = field(default_factory=list)

    @property
    def session_id(self) -> str | None:
        value = self.started.get("session_id")
        return value if isinstance(value, str) else None

    @property
    def notebook(self) -> str | None:
        """A notebook chat's notebook (its python ran in that notebook's folder)."""
        value = self.started.get("notebook")
        return value if isinstance(value, str) and value else None

    @property
    def manifest(self) -> dict[str, Any]:
        value = self.started.get("manifest")
        return value if isinstance(value, dict) else {}

    @property
    def owner(self) -> str | None:
        value = self.started.get("owner")
        return value if isinstance(value, str) and value else None

    def excerpt(self, call_ids: Iterable[str]) -> list[dict[str, Any]]:
        """The log lines of the run's start and end and of ``call_ids``' calls, long outputs
        and display data cut (the log keeps them whole)."""
        wanted = set(call_ids)
        kept = []
        for line in self.lines:
            data: dict[str, Any] = line["data"]
            kind = line.get("type")
            if kind in ("run.started", "run.completed", "run.error") or (
                isinstance(kind, str)
                and kind.startswith("tool.")
                and kind != "tool.output"
                and data.get("call_id") in wanted
            ):
                kept.append({**line, "data": _cut(data)})
        return kept


def _cut(data: dict[str, Any]) -> dict[str, Any]:
    out = dict(data)
    text = out.get("output")
    if isinstance(text, str) and len(text) > MAX_EXCERPT_TEXT:
        out["output"] = text[:MAX_EXCERPT_TEXT] + f"… [{len(text)} characters in the run log]"
    mime = out.get("mime")
    if isinstance(mime, dict):
        out["mime"] = {k: f"[{len(str(v))} characters in the run log]" for k, v in mime.items()}
    return out


def read_run(runs_dir: Path, run_id: str) -> RunRecord | None:
    """The record of ``run_id``, or None when it has no log (or the id is not an id)."""
    if not is_id(run_id):
        return None
    path = runs_dir / f"{run_id}.jsonl"
    if not path.is_file():
        return None
    record = RunRecord(run_id)
    with path.open(encoding="utf-8") as handle:
        for text in handle:
            try:
                line = json.loads(text)
            except ValueError:
                continue  # a torn line
            if isinstance(line, dict) and isinstance(line.get("data"), dict):
                _take(record, line)
    return record


def _take(record: RunRecord, line: dict[str, Any]) -> None:
    kind, data = line.get("type"), line["data"]
    ts_value, seq_value = line.get("ts"), line.get("seq")
    ts = float(ts_value) if isinstance(ts_value, (int, float)) else None
    seq = seq_value if isinstance(seq_value, int) else 0
    record.lines.append({k: line[k] for k in ("seq", "type", "data", "ts") if k in line})
    if kind == "run.started":
        record.started, record.started_at = data, ts
    elif kind == "run.completed":
        record.ended_at, record.reason = ts, data.get("reason")
    call_id = data.get("call_id")
    if not isinstance(call_id, str) or not isinstance(kind, str) or not kind.startswith("tool."):
        return
    call = record.calls.setdefault(call_id, Call(call_id))
    if kind == "tool.requested":
        call.name = str(data.get("name", ""))
        arguments = data.get("arguments")
        call.arguments = arguments if isinstance(arguments, dict) else {}
        call.requested_seq = seq
    elif kind == "tool.started":
        call.started_at = ts
        call.name = call.name or str(data.get("name", ""))
    elif kind == "tool.completed":
        call.completed, call.completed_at, call.completed_seq = data, ts, seq


@dataclass
class Step:
    """A producing step: a call of a run, and whether its result is the artifact's."""

    run: RunRecord
    call: Call
    final: bool = False


@dataclass
class Provenance:
    """An artifact's producing steps (oldest first), the runs they belong to, and what was
    left out (steps over the bound, a log that is gone)."""

    steps: list[Step] = field(default_factory=list)
    runs: dict[str, RunRecord] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def final(self) -> Step | None:
        return next((s for s in reversed(self.steps) if s.final), None)


def _stateful(run: RunRecord, until_seq: int | None = None) -> list[Call]:
    return [
        c
        for c in run.calls.values()
        if c.ran and c.name in STATEFUL and (until_seq is None or c.requested_seq < until_seq)
    ]


def producing_steps(
    manifest: ArtifactManifest, runs_dir: Path, session_runs: SessionRuns | None = None
) -> Provenance:
    """The steps that made ``manifest``'s bytes. A session's kernel keeps its state across
    turns, so they start with the stateful calls of the session's earlier runs; then, for a
    tool call's result, its run's stateful calls up to it and the call; for a scratch file the
    agent promoted, its run's stateful calls before the promotion; for one a person promoted,
    the stateful calls of the session's runs started before the promotion. None for a
    notebook output, a kernel value or a file."""
    found = Provenance()
    source = manifest.source
    lookup = session_runs or (lambda s: scan_session(runs_dir, s))
    target = source.run_id if source.kind == "tool" else None
    if source.kind == "scratch" and manifest.agent is not None:
        target = manifest.agent.run_id
    if target is not None:
        run = _run(found, runs_dir, target)
        call = run.calls.get(source.call_id or "") if run and source.kind == "tool" else None
        if run is None or (source.kind == "tool" and call is None):
            return found
        found.steps = _earlier(found, runs_dir, lookup, run.session_id, run.started_at)
        if call is not None:
            calls = [c for c in _stateful(run, call.requested_seq) if c.call_id != call.call_id]
            found.steps += [Step(run, c) for c in calls] + [Step(run, call, final=True)]
        elif manifest.agent is not None:
            found.steps += [Step(run, c) for c in _stateful(run, manifest.agent.run_seq + 1)]
    elif source.kind == "scratch" and source.session_id:
        promoted = _timestamp(manifest.created_at)
        found.steps = _earlier(found, runs_dir, lookup, source.session_id, promoted, True)
    if found.steps and not found.final:
        found.steps[-1].final = True
    if len(found.steps) > MAX_STEPS:
        found.notes.append(
            f"{len(found.steps) - MAX_STEPS} earlier step(s) left out (at most {MAX_STEPS})"
        )
        found.steps = found.steps[-MAX_STEPS:]
    return found


def _earlier(
    found: Provenance,
    runs_dir: Path,
    lookup: SessionRuns,
    session_id: str | None,
    before: float | None,
    inclusive: bool = False,
) -> list[Step]:
    """The stateful calls of the session's runs started before ``before``, oldest first."""
    if not session_id or before is None:
        return []
    steps: list[Step] = []
    for run_id in lookup(session_id)[-MAX_SESSION_RUNS:]:
        run = _run(found, runs_dir, run_id)
        started = run.started_at if run is not None else None
        if run is None or started is None:
            continue
        if started < before or (inclusive and started == before):
            steps.extend(Step(run, c) for c in _stateful(run))
    return steps


def _run(found: Provenance, runs_dir: Path, run_id: str) -> RunRecord | None:
    if run_id not in found.runs:
        run = read_run(runs_dir, run_id)
        if run is None:
            found.notes.append(f"the log of run {run_id} is gone: its steps are not known")
            return None
        found.runs[run_id] = run
    return found.runs[run_id]


def scan_session(runs_dir: Path, session_id: str) -> list[str]:
    """The runs of ``session_id``, oldest first, from the first line of each log (the run
    index does this faster: the gateway passes its lookup instead)."""
    found: list[tuple[float, str]] = []
    if not runs_dir.is_dir():
        return []
    for path in runs_dir.glob("*.jsonl"):
        try:
            with path.open(encoding="utf-8") as handle:
                first = json.loads(handle.readline() or "{}")
        except (OSError, ValueError):
            continue
        data = first.get("data") if isinstance(first, dict) else None
        if isinstance(data, dict) and data.get("session_id") == session_id:
            ts = first.get("ts")
            found.append((ts if isinstance(ts, (int, float)) else 0.0, path.stem))
    return [run_id for _, run_id in sorted(found)]


def _timestamp(iso: str) -> float:
    try:
        return datetime.fromisoformat(iso).timestamp()
    except ValueError:
        return float("inf")


def iso(ts: float | None) -> str | None:
    """A log time as ISO 8601 with milliseconds and a numeric offset (what the Process Run
    Crate profile's time pattern takes: ``+00:00``, not ``Z``)."""
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, timezone.utc).isoformat(timespec="milliseconds")
