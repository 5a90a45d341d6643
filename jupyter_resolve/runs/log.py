"""The run log: ``.resolve/runs/<run_id>.jsonl``, one normalized event a line, appended before
the event is sent so a client can reattach and a finished run can be replayed."""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..contracts.bodies import Event
from ..contracts.errors import RunLogError


class RunLog:
    """Append-only JSONL file of one run's events."""

    def __init__(self, directory: Path, run_id: str) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / f"{run_id}.jsonl"
        self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)

    def append_lines(self, events: Iterable[tuple[int, str, str]]) -> None:
        """Write the lines of ``(seq, type, data as JSON)`` events in one write, or nothing: a
        failed or short write (a full disk) is cut back to the last whole line and raised as
        :class:`RunLogError`."""
        if self._fd < 0:
            raise RunLogError(f"the run log {self.path} is closed")
        ts = repr(time.time())
        data = "".join(
            f'{{"seq":{seq},"type":{json.dumps(kind)},"data":{payload},"ts":{ts}}}\n'
            for seq, kind, payload in events
        ).encode()
        end = os.lseek(self._fd, 0, os.SEEK_END)
        try:
            written = os.write(self._fd, data)
            if written != len(data):
                raise OSError(f"short write: {written} of {len(data)} bytes")
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, end)  # no torn line
            raise RunLogError(f"cannot write the run log {self.path}: {exc}") from exc

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


@dataclass
class LoggedRun:
    """What a run log holds: the events, and when its first and last lines were written."""

    events: list[Event] = field(default_factory=list)
    first_ts: float | None = None
    last_ts: float | None = None


def read_run_log(path: Path) -> LoggedRun:
    """The events stored in a run log; torn lines are skipped."""
    logged = LoggedRun()
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            try:
                record = json.loads(line)
                event = Event(seq=record["seq"], type=record["type"], data=record["data"])
            except (ValueError, KeyError, TypeError):
                continue  # a torn line (a crash mid-write) is skipped, not fatal
            logged.events.append(event)
            ts = record.get("ts")
            if isinstance(ts, (int, float)) and not isinstance(ts, bool):
                logged.first_ts = ts if logged.first_ts is None else logged.first_ts
                logged.last_ts = ts
    return logged


def close_live_logs(
    directory: Path, final_type: str, id_field: str, data: dict[str, Any]
) -> list[str]:
    """On start: each log in ``directory`` that a previous process left without its
    ``final_type`` event gets one (``{id_field: <file name>, **data}``), so a replay ends.
    Returns the ids of the logs it closed."""
    closed: list[str] = []
    if not directory.is_dir():
        return closed
    for path in sorted(directory.glob("*.jsonl")):
        events = read_run_log(path).events
        if not events or events[-1].type == final_type:
            continue
        record = {
            "seq": events[-1].seq + 1,
            "type": final_type,
            "data": {id_field: path.stem, **data},
            "ts": time.time(),
        }
        with path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(record, separators=(",", ":")) + "\n")
        closed.append(path.stem)
    return closed
