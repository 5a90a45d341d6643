"""The run index: ``.resolve/runs.sqlite``, a row per run (DESIGN 10.2).

The run logs stay the record; this is what listings read, so a listing never opens a log. Rows
are written at a run's start and end by one writer thread (the event loop only queues them);
until a row is written, :meth:`RunIndex.pending` still has it, so a reader sees its own writes.
Rows put on the event loop go to the writer together, :data:`SEND_DELAY` seconds after the
first of them: waking the thread for each row handed it the GIL in the middle of other runs'
starts and first tokens (issue 47), and a short run's start and end rows become one. Work on the
whole index — rebuilding rows from the logs, retention (runs/index_upkeep.py) — runs on the same
thread, so it never blocks a request.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import queue
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..contracts.run_rows import Owners, Position, RunQuery, RunRow, Usage

FILE = "runs.sqlite"
VERSION = 1  # PRAGMA user_version: another version is dropped and rebuilt from the logs
BATCH = 500
SEND_DELAY = 0.25  # seconds rows put on an event loop wait, to go to the writer together

_COLUMNS = (
    "run_id, session_id, model, started_at, status, reason, ended_at, soul, task_id, parent, "
    "peer, owner, prompt, events, prompt_tokens, completion_tokens, cost"
)
_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY, session_id TEXT NOT NULL, model TEXT NOT NULL,
    started_at REAL NOT NULL, status TEXT NOT NULL, reason TEXT, ended_at REAL,
    soul TEXT, task_id TEXT, parent TEXT, peer TEXT, owner TEXT, prompt TEXT,
    events INTEGER NOT NULL, prompt_tokens INTEGER, completion_tokens INTEGER, cost REAL,
    log_mtime_ns INTEGER, log_size INTEGER);
CREATE INDEX IF NOT EXISTS runs_started ON runs (started_at, run_id);
CREATE INDEX IF NOT EXISTS runs_session ON runs (session_id, started_at);
CREATE INDEX IF NOT EXISTS runs_peer ON runs (peer, started_at, run_id);
CREATE INDEX IF NOT EXISTS runs_running ON runs (status) WHERE status = 'running';
"""

Job = Callable[[sqlite3.Connection], object]
"""Work for the writer thread, on its own connection."""
Item = RunRow | list[RunRow] | Job | None


@dataclass(frozen=True)
class SessionInfo:
    """A row of ``GET /resolve/api/sessions``."""

    session_id: str
    runs: int
    started_at: float  # its first run's start
    last_at: float  # its newest run's start
    prompt: str | None  # what its first run was asked
    peer: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "runs": self.runs,
            "started_at": self.started_at,
            "last_at": self.last_at,
            "prompt": self.prompt,
            "peer": self.peer,
        }


def row_values(row: RunRow, stat: os.stat_result | None) -> tuple[Any, ...]:
    usage = row.usage
    return (
        *(row.run_id, row.session_id, row.model, row.started_at, row.status, row.reason),
        *(row.ended_at, row.soul, row.task_id, row.parent, row.peer, row.owner, row.prompt),
        *(row.events, usage.prompt_tokens, usage.completion_tokens, usage.cost),
        stat.st_mtime_ns if stat else None,
        stat.st_size if stat else None,
    )


def upsert(db: sqlite3.Connection, values: Iterable[tuple[Any, ...]]) -> None:
    marks = ", ".join("?" * 19)
    db.executemany(
        f"INSERT OR REPLACE INTO runs ({_COLUMNS}, log_mtime_ns, log_size) VALUES ({marks})",
        values,
    )


def _row(values: tuple[Any, ...]) -> RunRow:
    (run_id, session_id, model, started_at, status, reason, ended_at, soul, task_id) = values[:9]
    (parent, peer, owner, prompt, events, prompt_tokens, completion_tokens, cost) = values[9:]
    return RunRow(
        *(run_id, session_id, model, started_at, status, reason, ended_at, soul, task_id),
        *(parent, peer, owner, prompt, events),
        usage=Usage(prompt_tokens, completion_tokens, cost),
    )


def connect(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=30)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")  # the logs are the record: the index is rebuilt
    db.execute("PRAGMA busy_timeout=30000")
    return db


def _open(path: Path, log: logging.Logger) -> tuple[sqlite3.Connection, bool]:
    """The index's connection, and whether it is new (to be filled from the logs). A file
    SQLite cannot read, or of another version, is started afresh."""
    path.parent.mkdir(parents=True, exist_ok=True)
    existed = path.is_file()
    try:
        db = connect(path)
        with contextlib.suppress(OSError):
            os.chmod(path, 0o600)
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if existed and version != VERSION:
            db.execute("DROP TABLE IF EXISTS runs")
            existed = False
        db.executescript(_SCHEMA)
        db.execute(f"PRAGMA user_version={VERSION}")
        return db, not existed
    except sqlite3.DatabaseError as exc:
        log.warning("the run index %s cannot be read (%s): rebuilding it from the logs", path, exc)
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(OSError):
                os.unlink(f"{path}{suffix}")
        return _open(path, log)


class RunIndex:
    """Rows of runs, written off the event loop, read by small indexed queries."""

    def __init__(self, path: Path, runs_dir: Path, log: logging.Logger) -> None:
        self.path = path
        self.runs_dir = runs_dir
        self.log = log
        self._writer, self.new = _open(path, log)
        self._reader = connect(path)
        self._read_lock = threading.Lock()
        self._pending: dict[str, RunRow] = {}
        self._unsent: dict[str, RunRow] = {}  # put on a loop, not handed to the writer yet
        self._send_on: asyncio.AbstractEventLoop | None = None  # the loop a send is due on
        self._pending_lock = threading.Lock()
        self._jobs: queue.Queue[Item] = queue.Queue()
        self._periodic: list[list[Any]] = []  # [due (monotonic), every (s), job]
        self.stopping = threading.Event()
        self.reconciled = threading.Event()  # every log indexed (set by the upkeep's pass)
        self._thread = threading.Thread(target=self._work, name="resolve-run-index", daemon=True)
        self._thread.start()

    # -- writing (any thread) ----------------------------------------------------------------

    def put(self, row: RunRow) -> None:
        """Queue ``row`` to be written; readers see it at once. On an event loop the row goes
        to the writer with the others put within :data:`SEND_DELAY`; elsewhere at once."""
        loop = _running_loop()
        with self._pending_lock:
            self._pending[row.run_id] = row
            if loop is not None:
                self._unsent[row.run_id] = row
                if self._send_on is loop:
                    return  # a send is due on this loop already
                self._send_on = loop
        if loop is None:
            self._jobs.put(row)
        else:
            loop.call_later(SEND_DELAY, self._send)

    def _send(self) -> None:
        """Hand the rows put on a loop to the writer, in one batch."""
        with self._pending_lock:
            rows = list(self._unsent.values())
            self._unsent.clear()
            self._send_on = None
        if rows:
            self._jobs.put(rows)

    def submit(self, job: Job) -> None:
        self._jobs.put(job)

    def every(self, seconds: float, job: Job) -> None:
        """Run ``job`` on the writer thread every ``seconds`` from now on (the first time
        after ``seconds``)."""
        with self._pending_lock:
            self._periodic.append([time.monotonic() + seconds, seconds, job])
        self._jobs.put(lambda _db: None)  # wake the thread to take the new deadline

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until what was queued before is done (tests, the command line, shutdown)."""
        self._send()
        done = threading.Event()
        self.submit(lambda _db: done.set())
        return done.wait(timeout)

    def close(self, timeout: float = 10.0) -> None:
        self._send()
        self.stopping.set()
        self._jobs.put(None)
        self._thread.join(timeout)
        with self._read_lock:
            self._reader.close()

    def _work(self) -> None:
        db = self._writer
        try:
            while True:
                try:
                    item = self._jobs.get(timeout=self._due(db))
                except queue.Empty:
                    continue
                batch: list[RunRow] = []
                while item is not None:
                    if isinstance(item, RunRow):
                        batch.append(item)
                    elif isinstance(item, list):
                        batch += item
                    else:
                        self._write(db, batch)
                        batch = []
                        self._run(db, item)
                    if len(batch) >= BATCH:
                        break
                    try:
                        item = self._jobs.get_nowait()
                    except queue.Empty:
                        break
                self._write(db, batch)
                if item is None:
                    return
        finally:
            db.close()

    def _due(self, db: sqlite3.Connection) -> float | None:
        """Run the periodic jobs that are due; the seconds until the next one."""
        with self._pending_lock:
            periodic = list(self._periodic)
        now = time.monotonic()
        for entry in periodic:
            if entry[0] <= now and not self.stopping.is_set():
                self._run(db, entry[2])
                entry[0] = time.monotonic() + entry[1]
        if not periodic:
            return None
        return max(0.01, float(min(e[0] for e in periodic)) - time.monotonic())

    def _run(self, db: sqlite3.Connection, job: Job) -> None:
        try:
            job(db)
        except Exception:  # one failed job must not stop the index's writes
            self.log.exception("the run index's upkeep failed")

    def _write(self, db: sqlite3.Connection, rows: list[RunRow]) -> None:
        if not rows:
            return
        values = []
        for row in rows:
            stat = None
            with contextlib.suppress(OSError):
                stat = (self.runs_dir / f"{row.run_id}.jsonl").stat()
            values.append(row_values(row, stat))
        try:
            with db:
                db.execute("BEGIN")
                upsert(db, values)
        except sqlite3.Error as exc:
            self.log.warning("the run index could not be written (%s); the logs keep the runs", exc)
        with self._pending_lock:
            for row in rows:
                if self._pending.get(row.run_id) is row:
                    del self._pending[row.run_id]

    # -- reading (the event loop) ------------------------------------------------------------

    def pending(self) -> dict[str, RunRow]:
        with self._pending_lock:
            return dict(self._pending)

    def _select(self, sql: str, params: Iterable[Any] = ()) -> list[Any]:
        with self._read_lock:
            return self._reader.execute(sql, tuple(params)).fetchall()

    def rows(self, query: RunQuery) -> list[RunRow]:
        """Up to ``limit + 1`` rows the query asks for, newest first."""
        where, params = query.where()
        sql = f"SELECT {_COLUMNS} FROM runs WHERE {where} ORDER BY started_at DESC, run_id DESC"
        return [_row(v) for v in self._select(f"{sql} LIMIT ?", [*params, query.limit + 1])]

    def count(self, query: RunQuery) -> int:
        where, params = query.where(ignore_position=True)
        return int(self._select(f"SELECT COUNT(*) FROM runs WHERE {where}", params)[0][0])

    def has(self, run_ids: Iterable[str]) -> set[str]:
        ids = list(run_ids)
        if not ids:
            return set()
        marks = ", ".join("?" * len(ids))
        return {
            r[0] for r in self._select(f"SELECT run_id FROM runs WHERE run_id IN ({marks})", ids)
        }

    def session_rows(self, session_id: str) -> list[RunRow]:
        """Every run of a session, oldest first (its transcript reads only these)."""
        sql = f"SELECT {_COLUMNS} FROM runs WHERE session_id = ? ORDER BY started_at, run_id"
        return [_row(v) for v in self._select(sql, [session_id])]

    def running_ids(self) -> list[str]:
        return [r[0] for r in self._select("SELECT run_id FROM runs WHERE status = 'running'")]

    def ids(self) -> set[str]:
        return {r[0] for r in self._select("SELECT run_id FROM runs")}

    def sessions(
        self, before: Position | None, limit: int, owners: Owners = None
    ) -> list[SessionInfo]:
        """Sessions, newest run first, after ``before`` (``(last_at, session_id)``): up to
        ``limit + 1``; with ``owners``, only what their runs and the ownerless ones make."""
        where, params = RunQuery(owners=owners).where(ignore_position=True)
        having = "HAVING (MAX(started_at), session_id) < (?, ?)" if before else ""
        grouped = (
            "SELECT session_id, COUNT(*), MIN(started_at), MAX(started_at), MAX(peer) "
            f"FROM runs WHERE {where} GROUP BY session_id {having} "
            "ORDER BY MAX(started_at) DESC, session_id DESC LIMIT ?"
        )
        found = self._select(grouped, [*params, *(before or ()), limit + 1])
        first = (
            "SELECT prompt FROM runs WHERE session_id = ? AND parent IS NULL AND task_id IS NULL "
            "ORDER BY started_at, run_id LIMIT 1"
        )
        sessions = []
        for session_id, runs, started, last, peer in found:
            prompt = self._select(first, [session_id])
            sessions.append(
                SessionInfo(session_id, runs, started, last, prompt[0][0] if prompt else None, peer)
            )
        return sessions


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
