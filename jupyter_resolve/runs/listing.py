"""Paged listings of runs and sessions: the index's rows, with what memory knows better laid
over them (live runs as they are now, rows not written yet), newest first with a cursor."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from ..contracts.bodies import RunInfo
from ..contracts.run_rows import (
    Owners,
    Position,
    RunQuery,
    RunRow,
    completed_row,
    encode_cursor,
    merge_page,
    row_from_log,
    started_row,
    usage_totals,
)
from .index import RunIndex, SessionInfo
from .run import Run


@dataclass(frozen=True)
class RunPage:
    runs: list[RunInfo]
    next: str | None  # the cursor of the next page (None: this is the last)


@dataclass(frozen=True)
class SessionPage:
    sessions: list[SessionInfo]
    next: str | None


def row_of(run: Run) -> RunRow:
    """The index's row for a run held in memory, as it stands now."""
    started = run.events[0].data if run.events and run.events[0].type == "run.started" else {}
    row = started_row(run.run_id, {"session_id": run.session_id, **started}, run.started_at)
    # soul: the run's, else an external agent's name (run.started.agent)
    row = replace(row, soul=run.soul or row.soul, model=run.model, events=len(run.events))
    if not run.completed:
        return row
    usage = usage_totals(e.data for e in run.events if e.type == "usage")
    ended = run.ended_at if run.ended_at is not None else run.started_at
    return completed_row(row, run.events[-1].data, ended, len(run.events), usage)


def put_live(index: RunIndex, run: Run) -> None:
    """A live run's row, put once its first output is on its way (``after_next_batch``): until
    then listings take it from memory, and after a crash the next start indexes its log."""
    if not run.completed:  # else its final row is put already
        index.put(row_of(run))


def _overlay(index: RunIndex, live: Iterable[Run]) -> dict[str, RunRow]:
    """Memory's rows. Taken before the index is read: the writer commits rows, then drops
    them from ``pending``, so a row is in one or the other; read the other way round, a batch
    committed between the two reads would be in neither."""
    rows = index.pending()
    rows.update({run.run_id: row_of(run) for run in live})
    return rows


def page(index: RunIndex, live: Iterable[Run], query: RunQuery) -> RunPage:
    overlay = {run_id: row.info() for run_id, row in _overlay(index, live).items()}
    indexed = [row.info() for row in index.rows(query)]
    runs, position = merge_page(query, indexed, overlay)
    return RunPage(runs, encode_cursor(position) if position else None)


def count(index: RunIndex, live: Iterable[Run], query: RunQuery) -> int:
    """How many runs the query matches, whatever the page."""
    overlay = [
        info
        for row in _overlay(index, live).values()
        if query.matches(info := row.info(), ignore_position=True)
    ]
    known = index.has(i.run_id for i in overlay)
    return index.count(query) + sum(1 for info in overlay if info.run_id not in known)


def session_rows(
    index: RunIndex, live: Iterable[Run], session_id: str, scan: Path | None = None
) -> list[RunRow]:
    """A session's runs, oldest first: the index's rows, memory's over them (and, given
    ``scan``, the rows of that folder's logs the index does not have yet)."""
    overlay = _overlay(index, live)  # first: see _overlay
    rows = {row.run_id: row for row in index.session_rows(session_id)}
    if scan is not None and scan.is_dir():
        for path in scan.glob("*.jsonl"):
            if path.stem not in rows:
                row = _head_row(path)
                if row is not None and row.session_id == session_id:
                    rows[row.run_id] = row
    for run_id, row in overlay.items():
        if row.session_id == session_id:
            rows[run_id] = row
    return sorted(rows.values(), key=lambda r: r.position)


def _head_row(path: Path) -> RunRow | None:
    """A run's row from its log's first line only (it ends with the run, or now)."""
    try:
        with path.open("rb") as handle:
            first = json.loads(handle.readline())
    except (OSError, ValueError):
        return None
    return row_from_log(path.stem, first if isinstance(first, dict) else None, None)


def _owned(row: RunRow, owners: Owners) -> bool:
    return owners is None or row.owner is None or row.owner in owners


def sessions(
    index: RunIndex,
    live: Iterable[Run],
    before: Position | None,
    limit: int,
    owners: Owners = None,
) -> SessionPage:
    """Sessions, the one with the newest run first; a session that only memory knows yet (its
    first run's row not written) is listed too. With ``owners``, only the sessions of their
    runs and of runs without an owner."""
    overlay = _overlay(index, live)  # first: see _overlay
    found = {s.session_id: s for s in index.sessions(before, limit, owners)}
    fresh: dict[str, list[RunRow]] = {}
    for row in overlay.values():
        if _owned(row, owners):
            fresh.setdefault(row.session_id, []).append(row)
    for session_id, mine in fresh.items():
        if session_id in found:
            continue
        # its older rows too (or its fresh ones, written since the overlay was taken)
        merged = {r.run_id: r for r in index.session_rows(session_id) if _owned(r, owners)}
        merged.update({r.run_id: r for r in mine})
        rows = sorted(merged.values(), key=lambda r: r.position)
        first = next((r for r in rows if r.top_level), rows[0])
        found[session_id] = SessionInfo(
            session_id, len(rows), rows[0].started_at, rows[-1].started_at, first.prompt, first.peer
        )
    chosen = sorted(
        (s for s in found.values() if before is None or (s.last_at, s.session_id) < before),
        key=lambda s: (s.last_at, s.session_id),
        reverse=True,
    )
    shown = chosen[:limit]
    more = len(chosen) > limit
    cursor = encode_cursor((shown[-1].last_at, shown[-1].session_id)) if more and shown else None
    return SessionPage(shown, cursor)
