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


def _record(line: bytes) -> dict[str, Any] | None:
    try:
        record = json.loads(line)
    except ValueError:
        return None  # a torn line (a crash mid-write)
    ok = isinstance(record, dict) and isinstance(record.get("seq"), int)
    return record if ok and isinstance(record.get("type"), str) else None


def last_record(path: Path, block: int = 1 << 16) -> dict[str, Any] | None:
    """The log's last whole record, read from its end (torn lines skipped)."""
    with path.open("rb") as handle:
        end = handle.seek(0, os.SEEK_END)
        tail = b""
        position = end
        while position > 0:
            step = min(block, position)
            position -= step
            handle.seek(position)
            tail = handle.read(step) + tail
            lines = tail.split(b"\n")
            # the first piece may be a line cut by where we started reading: keep it for later
            for line in reversed(lines if position == 0 else lines[1:]):
                record = _record(line) if line.strip() else None
                if record is not None:
                    return record
            tail = lines[0] if position > 0 else b""
    return None


@dataclass
class LogSummary:
    """What the run index takes from a log: its first and last records, its usage data."""

    first: dict[str, Any] | None
    last: dict[str, Any] | None
    usages: list[dict[str, Any]]


def summarize_log(path: Path) -> LogSummary:
    """One read of a log; only the first, the last and the ``usage`` lines are parsed."""
    lines = path.read_bytes().split(b"\n")
    first = _record(lines[0]) if lines and lines[0].strip() else None
    last = next((r for line in reversed(lines) if line.strip() and (r := _record(line))), None)
    usages = []
    for line in lines:
        if b'"type":"usage"' in line:
            record = _record(line)
            if record is not None and isinstance(record.get("data"), dict):
                usages.append(record["data"])
    return LogSummary(first, last, usages)


def close_live_log(path: Path, final_type: str, id_field: str, data: dict[str, Any]) -> bool:
    """Give a log that a previous process left without its ``final_type`` event that event
    (``{id_field: <file name>, **data}``), so a replay ends; True when it did."""
    try:
        last = last_record(path)
    except OSError:
        return False
    if last is None or last["type"] == final_type:
        return False
    record = {
        "seq": last["seq"] + 1,
        "type": final_type,
        "data": {id_field: path.stem, **data},
        "ts": time.time(),
    }
    line = json.dumps(record, separators=(",", ":")) + "\n"
    with path.open("r+b") as handle:
        end = handle.seek(0, os.SEEK_END)
        handle.seek(max(end - 1, 0))
        torn = end > 0 and handle.read(1) != b"\n"  # a torn last line: start a new one
        handle.write((("\n" if torn else "") + line).encode())
    return True


def close_live_logs(
    directory: Path, final_type: str, id_field: str, data: dict[str, Any]
) -> list[str]:
    """On start: each log in ``directory`` that a previous process left without its
    ``final_type`` event gets one (:func:`close_live_log`). Returns the ids of the logs it
    closed."""
    if not directory.is_dir():
        return []
    paths = sorted(directory.glob("*.jsonl"))
    return [path.stem for path in paths if close_live_log(path, final_type, id_field, data)]
