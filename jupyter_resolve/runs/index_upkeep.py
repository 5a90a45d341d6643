"""Keeping the run index true to the logs: closing runs a stopped server left live, rebuilding
rows from the logs (a missing index, a log added or changed), and retention.

All of it runs on the index's writer thread (runs/index.py), in batches, and stops between
batches when the server stops; the one step done at start before anything is served is
:func:`close_left_live`, which reads only the ends of the logs that can need it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..contracts.run_rows import RunQuery, RunRow, row_from_log
from .index import BATCH, RunIndex, row_values, upsert
from .log import close_live_log, summarize_log

INTERRUPTED = {
    "reason": "interrupted",
    "rounds": 0,
    "summary": {"text": "The server stopped while this run was live."},
}

Ids = Callable[[], set[str]]

# A pass over every log holds the GIL in between its system calls: it stops this often so that
# a request served meanwhile is not made to wait for the GIL again and again.
YIELD_EVERY = 250
YIELD_SECONDS = 0.002


def close_interrupted(path: Path) -> bool:
    """End a log a previous process left live with ``run.completed`` ``interrupted``."""
    return close_live_log(path, "run.completed", "run_id", INTERRUPTED)


def log_names(runs_dir: Path) -> set[str]:
    if not runs_dir.is_dir():
        return set()
    return {name[:-6] for name in os.listdir(runs_dir) if name.endswith(".jsonl")}


def close_left_live(index: RunIndex, runs_dir: Path) -> list[str]:
    """At start: close the logs of runs the index says were live, and of logs it does not
    know yet (a new index leaves those to :func:`reconcile`, in the background)."""
    candidates = set(index.running_ids())
    if not index.new:
        candidates |= log_names(runs_dir) - index.ids()
    closed = [r for r in sorted(candidates) if _close(runs_dir / f"{r}.jsonl")]
    for run_id in candidates:  # listed as their logs end (some ended before the row said so)
        row = _log_row(runs_dir, run_id)
        if row is not None:
            index.put(row)
    return closed


def _log_row(runs_dir: Path, run_id: str) -> RunRow | None:
    try:
        summary = summarize_log(runs_dir / f"{run_id}.jsonl")
    except OSError:
        return None
    return row_from_log(run_id, summary.first, summary.last, summary.usages)


def rebuild(index_path: Path, runs_dir: Path, log: logging.Logger) -> int:
    """``jupyter resolve reindex``: the index made again from the logs alone (none is closed:
    a server may be running); the number of runs indexed."""
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f"{index_path}{suffix}")
    index = RunIndex(index_path, runs_dir, log)
    upkeep = Upkeep(
        runs_dir=runs_dir,
        since=0.0,  # no log is older than this: none is closed
        live=set,
        protected=set,
        stopping=index.stopping,
        reconciled=index.reconciled,
        log=log,
    )
    index.submit(upkeep.reconcile)
    index.flush()
    count = index.count(RunQuery())
    index.close()
    return count


def _close(path: Path) -> bool:
    try:
        return close_interrupted(path)
    except OSError:
        return False


@dataclass
class Upkeep:
    """What the writer thread needs to keep the index true: the logs, which runs are live in
    this process (and when it started), which runs an artifact names."""

    runs_dir: Path
    since: float  # this process's start: an older log left live was left by another process
    live: Ids
    protected: Ids
    stopping: threading.Event
    reconciled: threading.Event
    log: logging.Logger
    closed: list[str] | None = None  # the runs reconcile found left live and closed

    def reconcile(self, db: sqlite3.Connection) -> None:
        """Index every log the index does not know, or that changed since it was indexed;
        forget rows whose log is gone."""
        entries = {e.name[:-6]: e for e in _scan(self.runs_dir) if e.name.endswith(".jsonl")}
        known = {
            run_id: (mtime, size)
            for run_id, mtime, size in db.execute("SELECT run_id, log_mtime_ns, log_size FROM runs")
        }
        gone = [(run_id,) for run_id in known if run_id not in entries]
        if gone:
            with db:
                db.execute("BEGIN")
                db.executemany("DELETE FROM runs WHERE run_id = ?", gone)
        todo = []
        for n, (run_id, entry) in enumerate(entries.items()):
            if n % YIELD_EVERY == 0:
                time.sleep(YIELD_SECONDS)  # the event loop's thread takes the GIL meanwhile
            with contextlib.suppress(OSError):
                stat = entry.stat()
                if known.get(run_id) != (stat.st_mtime_ns, stat.st_size):
                    todo.append(run_id)
        self.closed = []
        for start in range(0, len(todo), BATCH):
            if self.stopping.is_set():
                return
            self._index_batch(db, todo[start : start + BATCH])
            time.sleep(YIELD_SECONDS)
        self.reconciled.set()
        if todo or gone:
            self.log.info(
                "run index: %d log(s) indexed, %d row(s) of deleted logs dropped",
                len(todo),
                len(gone),
            )

    def _index_batch(self, db: sqlite3.Connection, run_ids: list[str]) -> None:
        live = self.live()
        values = []
        for run_id in run_ids:
            path = self.runs_dir / f"{run_id}.jsonl"
            try:
                if run_id not in live and path.stat().st_mtime < self.since and _close(path):
                    self.log.warning(
                        "run %s was live when the server stopped: marked interrupted", run_id
                    )
                    assert self.closed is not None
                    self.closed.append(run_id)
                summary = summarize_log(path)
                stat = path.stat()
            except OSError:
                continue
            row = row_from_log(run_id, summary.first, summary.last, summary.usages)
            if row is not None:
                values.append(row_values(row, stat))
        with db:
            db.execute("BEGIN")
            upsert(db, values)

    def retain(self, db: sqlite3.Connection, days: float) -> int:
        """Delete the logs (and rows) of runs that ended more than ``days`` ago, except those an
        artifact's provenance names and those live here; says so in the server's log."""
        cutoff = time.time() - days * 86400
        old = [
            r[0]
            for r in db.execute(
                "SELECT run_id FROM runs WHERE status = 'completed' "
                "AND COALESCE(ended_at, started_at) < ?",
                (cutoff,),
            )
        ]
        if not old:
            return 0
        named = self.protected()
        keep = named | self.live()
        doomed = [run_id for run_id in old if run_id not in keep]
        for run_id in doomed:
            with contextlib.suppress(FileNotFoundError):
                (self.runs_dir / f"{run_id}.jsonl").unlink()
        with db:
            db.execute("BEGIN")
            db.executemany("DELETE FROM runs WHERE run_id = ?", [(r,) for r in doomed])
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(cutoff))
        self.log.info(
            "run retention (c.Resolve.run_retention_days = %g): deleted %d run log(s) of runs "
            "that ended before %s; kept %d an artifact's provenance names",
            days,
            len(doomed),
            when,
            sum(1 for run_id in old if run_id in named),
        )
        return len(doomed)


def _scan(runs_dir: Path) -> list[os.DirEntry[str]]:
    if not runs_dir.is_dir():
        return []
    with os.scandir(runs_dir) as entries:
        return list(entries)
