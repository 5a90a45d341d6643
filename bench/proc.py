"""What ``/proc`` says about a process: CPU time (utime + stime) and resident memory."""

from __future__ import annotations

import os
from pathlib import Path

from .core import BenchError

TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of ``pid`` so far (``/proc/<pid>/stat`` fields 14 and 15)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError as exc:
        raise BenchError(f"cannot read /proc/{pid}/stat: {exc}") from exc
    fields = text.rpartition(")")[2].split()  # after the command name, which may hold spaces
    return (int(fields[11]) + int(fields[12])) / TICKS


def status_kib(pid: int, name: str = "VmRSS") -> float:
    """A ``kB`` field of ``/proc/<pid>/status`` (VmRSS, VmHWM, ...)."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError as exc:
        raise BenchError(f"cannot read /proc/{pid}/status: {exc}") from exc
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key == name and value.strip().endswith(" kB"):
            return float(value.strip()[:-3])
    raise BenchError(f"/proc/{pid}/status has no {name} in kB")
