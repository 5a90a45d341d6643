"""The run log: ``.resolve/runs/<run_id>.jsonl``, one normalized event a line, appended before
the event is sent so a client can reattach and a finished run can be replayed."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from ..models import Event


class RunLog:
    """Append-only JSONL file of one run's events."""

    def __init__(self, directory: Path, run_id: str) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / f"{run_id}.jsonl"
        self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)

    def append(self, event: Event) -> None:
        """Write one whole line with a single write(2), so a failure never leaves half a line."""
        record = {"seq": event.seq, "type": event.type, "data": event.data, "ts": time.time()}
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
        data = line.encode()
        written = os.write(self._fd, data)
        if written != len(data):
            raise OSError(f"short write to run log {self.path}: {written} of {len(data)} bytes")

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def read_run_log(path: Path) -> list[Event]:
    """The events stored in a run log; torn lines are skipped."""
    events: list[Event] = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            try:
                record = json.loads(line)
                events.append(Event(seq=record["seq"], type=record["type"], data=record["data"]))
            except (ValueError, KeyError, TypeError):
                continue  # a torn line (a crash mid-write) is skipped, not fatal
    return events
