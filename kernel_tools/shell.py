"""The shell tool: ``/bin/sh -c`` in ``work/``, its own process group, killed whole on timeout."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from typing import IO

from .paths import Workspace
from .result import Result, error, truncate

DEFAULT_TIMEOUT = 60.0
MAX_TIMEOUT = 600.0
CAPTURE_LIMIT = 4 * 1024 * 1024  # bytes kept in memory; the output is cut far below this


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


def _reader(stream: IO[bytes], chunks: list[bytes]) -> None:
    kept = 0
    while True:
        try:
            chunk = os.read(stream.fileno(), 65536)
        except (OSError, ValueError):
            return
        if not chunk:
            return
        if kept < CAPTURE_LIMIT:
            chunks.append(chunk)
            kept += len(chunk)


def effective_timeout(requested: float | None, call_timeout: float | None) -> float:
    """The requested timeout (default 60 s), at most 600 s and at most the call's own limit."""
    limit = min(DEFAULT_TIMEOUT if requested is None else requested, MAX_TIMEOUT)
    if call_timeout is not None and call_timeout > 0:
        limit = min(limit, call_timeout)
    return max(limit, 0.1)


def shell(
    ws: Workspace,
    command: str,
    timeout: float | None = None,
    call_timeout: float | None = None,
) -> Result:
    limit = effective_timeout(timeout, call_timeout)
    started = time.monotonic()
    try:
        proc = subprocess.Popen(
            ["/bin/sh", "-c", command],
            cwd=ws.work,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    except OSError as exc:
        return error(f"shell: could not start /bin/sh in work/: {exc}")
    chunks: list[bytes] = []
    assert proc.stdout is not None
    thread = threading.Thread(target=_reader, args=(proc.stdout, chunks), daemon=True)
    thread.start()
    timed_out = False
    try:
        proc.wait(timeout=limit)
    except subprocess.TimeoutExpired:
        timed_out = True
    except BaseException:  # KeyboardInterrupt from the gateway's interrupt: leave nothing behind
        _kill_group(proc)
        raise
    lingering = False
    if timed_out:
        _kill_group(proc)
    else:
        # the shell has exited; children it left in the background may still hold the pipe
        thread.join(timeout=2)
        lingering = thread.is_alive()
        if lingering:
            _kill_group(proc)
    thread.join(timeout=2)
    if not thread.is_alive():  # else a process that left the group still holds it: leave it be
        proc.stdout.close()
    text = b"".join(chunks).decode("utf-8", errors="replace")
    elapsed = time.monotonic() - started
    if timed_out:
        note = (
            f"[timed out after {limit:g} s: the command and every process it started were "
            "killed; the output above is what it printed until then]"
        )
        return error(_join(text, note))
    code = proc.returncode
    status = f"[exit code {code}]" if code >= 0 else f"[killed by signal {-code}]"
    if lingering:
        status += (
            " [background processes still holding the output were killed; redirect their "
            "output (cmd > log 2>&1 &) to keep them running]"
        )
    return Result(code == 0, _join(text, f"{status} ({elapsed:.2f} s)"), None)


def _join(text: str, note: str) -> str:
    body = truncate(text)
    return f"{body}{'' if not body or body.endswith(chr(10)) else chr(10)}{note}"
