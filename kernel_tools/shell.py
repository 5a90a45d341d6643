"""The shell tool: ``/bin/sh -c`` in ``work/``, its own process group, killed whole on timeout."""

from __future__ import annotations

import codecs
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from contextvars import ContextVar
from typing import IO

from .paths import Workspace
from .result import OUTPUT_LIMIT, Result, error, truncate

DEFAULT_TIMEOUT = 60.0
MAX_TIMEOUT = 600.0
CAPTURE_LIMIT = 4 * 1024 * 1024  # bytes kept in memory; the output is cut far below this
ECHO_INTERVAL = 0.1

LIVE: ContextVar[Callable[[str], None] | None] = ContextVar("LIVE", default=None)
"""Where the command's output goes as it comes, if anywhere: the bridge sets it to the kernel's
stdout, which the gateway shows live while the call runs (``tool.output``)."""


class Echo:
    """Passes on what the command printed since the last time, up to ``OUTPUT_LIMIT``
    characters in all (the result is cut there too)."""

    def __init__(self, write: Callable[[str], None]) -> None:
        self.write = write
        self.seen = 0  # chunks passed on
        self.chars = 0
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def __call__(self, chunks: list[bytes], final: bool = False) -> None:
        new = chunks[self.seen :]  # the reader thread appends meanwhile: a snapshot
        self.seen += len(new)
        text = self.decoder.decode(b"".join(new), final=final)
        room = OUTPUT_LIMIT - self.chars
        if text and room > 0:
            self.write(text[:room])
            self.chars += min(len(text), room)


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


def _wait(
    proc: subprocess.Popen[bytes], limit: float, echo: Echo | None, chunks: list[bytes]
) -> bool:
    """Wait for the shell to exit, passing its output on meanwhile; True when it timed out."""
    deadline = time.monotonic() + limit
    while True:
        step = deadline - time.monotonic()
        try:
            proc.wait(timeout=max(0.0, step if echo is None else min(step, ECHO_INTERVAL)))
            return False
        except subprocess.TimeoutExpired:
            if time.monotonic() >= deadline:
                return True
            if echo is not None:
                echo(chunks)


def shell(
    ws: Workspace,
    command: str,
    timeout: float | None = None,
    call_timeout: float | None = None,
    live: Callable[[str], None] | None = None,
) -> Result:
    """Run ``command``; what it prints goes to ``live`` too, as it comes, when given."""
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
    echo = Echo(live) if live is not None else None
    try:
        timed_out = _wait(proc, limit, echo, chunks)
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
    if echo is not None:
        echo(chunks, final=True)
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
