"""Peer nonces kept on disk, so that a request replayed to a restarted server is refused.

One SQLite file under the gateway's state dir (``.resolve/peer-nonces/nonces.sqlite3``): a row
per (peer, nonce) with its timestamp, pruned once the timestamp is past the skew window (then the
timestamp alone refuses the request). Bounded like :class:`~.signing.NonceCache`: when full, the
oldest rows go and every timestamp up to theirs is refused from then on (the floor is stored too).
Every admission is committed before the request is served.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from pathlib import Path

from .signing import MAX_SKEW

FILE = "nonces.sqlite3"


class DiskNonces:
    """Implements :class:`~.signing.Nonces` over a SQLite file."""

    def __init__(self, folder: Path, *, window: float = MAX_SKEW, capacity: int = 100_000) -> None:
        self.window = window
        self.capacity = capacity
        folder.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(OSError):
            os.chmod(folder, 0o700)
        self.path = folder / FILE
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        with contextlib.suppress(OSError):
            os.chmod(self.path, 0o600)
        self._db.execute("PRAGMA journal_mode=WAL")
        # FULL: an admitted nonce is on disk before the job it admits starts
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.execute("PRAGMA busy_timeout=5000")
        self._db.executescript(
            """
            CREATE TABLE IF NOT EXISTS nonces (
                peer TEXT NOT NULL, nonce TEXT NOT NULL, ts REAL NOT NULL,
                PRIMARY KEY (peer, nonce)) WITHOUT ROWID;
            CREATE INDEX IF NOT EXISTS nonces_ts ON nonces (ts);
            CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value REAL NOT NULL);
            """
        )

    def __len__(self) -> int:
        with self._lock:
            row = self._db.execute("SELECT COUNT(*) FROM nonces").fetchone()
        return int(row[0])

    def _floor(self) -> float:
        row = self._db.execute("SELECT value FROM meta WHERE key = 'floor'").fetchone()
        return float(row[0]) if row else float("-inf")

    def admit(self, peer: str, nonce: str, timestamp: float, now: float) -> bool:
        """Record the nonce; False when it was seen before (or is too old to be judged)."""
        with self._lock:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                db.execute("DELETE FROM nonces WHERE ts < ?", (now - self.window,))
                if timestamp <= self._floor():
                    db.execute("COMMIT")
                    return False
                inserted = db.execute(
                    "INSERT OR IGNORE INTO nonces (peer, nonce, ts) VALUES (?, ?, ?)",
                    (peer, nonce, timestamp),
                ).rowcount
                if not inserted:
                    db.execute("COMMIT")
                    return False
                over = db.execute("SELECT COUNT(*) FROM nonces").fetchone()[0] - self.capacity
                admitted = True
                if over > 0:
                    # drop the oldest and refuse their timestamps (and older) from now on
                    oldest = db.execute(
                        "SELECT peer, nonce, ts FROM nonces ORDER BY ts LIMIT ?", (over,)
                    ).fetchall()
                    db.executemany(
                        "DELETE FROM nonces WHERE peer = ? AND nonce = ?",
                        [(p, n) for p, n, _ in oldest],
                    )
                    floor = max(self._floor(), *(ts for _, _, ts in oldest))
                    db.execute(
                        "INSERT OR REPLACE INTO meta (key, value) VALUES ('floor', ?)", (floor,)
                    )
                    admitted = timestamp > floor
                db.execute("COMMIT")
                return admitted
            except BaseException:
                db.execute("ROLLBACK")
                raise

    def close(self) -> None:
        with self._lock:
            self._db.close()
