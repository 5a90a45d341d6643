"""agent-httpd asks the kernel for short time slices on each of its threads
(native/agent-httpd/src/slice.c), so a chunk or a frame that wakes one gets a core at once,
not when a busy task's slice ends; a run's thread has the default slice while an answer streams
in (it then reads more at once and sends fewer frames). Checked where the kernel takes a
thread's own slice (Linux 6.12 and later); elsewhere the runtime runs as before and the test is
skipped."""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import re
import socket
import struct
import threading
from pathlib import Path

import pytest

from tests.native.runtime import running

TOKEN = "slices-test-token-0123456789"
SLICE_NS = 100_000  # slice.h
SCHED_SETATTR = {"x86_64": 314, "aarch64": 274}


def slice_of(sched: Path) -> int | None:
    """A thread's slice in ns, from its /proc/…/sched (None: not there)."""
    try:
        text = sched.read_text()
    except OSError:
        return None
    found = re.search(r"^se\.slice\s*:\s*(\d+)", text, re.MULTILINE)
    return int(found.group(1)) if found else None


def kernel_takes_thread_slices() -> bool:
    """Ask for a short slice on a thread of this test's own and read it back."""
    number = SCHED_SETATTR.get(os.uname().machine)
    if number is None:
        return False
    seen: list[int | None] = []

    def probe() -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        nice = os.getpriority(os.PRIO_PROCESS, 0)
        attr = struct.pack("=IIQiIQQQ", 48, 0, 0, nice, 0, SLICE_NS, 0, 0)
        if libc.syscall(number, 0, attr, 0) == 0:
            seen.append(slice_of(Path(f"/proc/self/task/{threading.get_native_id()}/sched")))

    thread = threading.Thread(target=probe)
    thread.start()
    thread.join()
    return seen == [SLICE_NS]


class Upstream:
    """The runtime's inference and tools URLs, scripted: the answer's head and a first text
    chunk, then (on ``go``) a tool call and the end; a tool call is held until the end."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.go = threading.Event()
        self.tool_asked = threading.Event()
        self.done = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                conn, _ = self.listener.accept()
                threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn, contextlib.suppress(OSError):
            data = b""
            while b"\r\n\r\n" not in data:
                piece = conn.recv(65536)
                if not piece:
                    return
                data += piece
            if data.startswith(b"POST /tools"):
                self.tool_asked.set()
                self.done.wait(30)
                return
            conn.sendall(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
                + event({"content": "Hello"})
            )
            if not self.go.wait(30):
                return
            call = {"index": 0, "id": "c1", "type": "function"}
            call["function"] = {"name": "echo", "arguments": "{}"}
            conn.sendall(event({"tool_calls": [call]}, "tool_calls") + b"data: [DONE]\n\n")

    def close(self) -> None:
        self.done.set()
        self.listener.close()


def event(delta: dict[str, object], finish: str | None = None) -> bytes:
    chunk = {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


def run_threads(pid: int) -> dict[str, int | None]:
    """The slice of each of the runtime's threads but the listener's."""
    tasks = Path(f"/proc/{pid}/task")
    return {t.name: slice_of(t / "sched") for t in tasks.iterdir() if t.name != str(pid)}


@pytest.mark.skipif(not Path("/proc/self/sched").exists(), reason="no /proc/<pid>/sched")
def test_runtime_threads_run_in_short_slices_but_while_an_answer_streams() -> None:
    if not kernel_takes_thread_slices():
        pytest.skip("this kernel does not take a thread's own slice (Linux 6.12+)")
    default = slice_of(Path(f"/proc/self/task/{threading.get_native_id()}/sched"))
    assert default not in (None, SLICE_NS)
    upstream = Upstream()
    urls = ["--inference-url", f"{upstream.url}/v1/chat/completions"]
    urls += ["--tools-url", f"{upstream.url}/tools"]
    tool = {"type": "function", "function": {"name": "echo", "parameters": {"type": "object"}}}
    chat_body = {"run_id": "run-slices", "message": "hi", "history": [], "system": ""}
    body = json.dumps({**chat_body, "tools": [tool], "model": "m"}).encode()
    try:
        with running(TOKEN, *urls) as runtime:
            pid = runtime.proc.pid
            assert slice_of(Path(f"/proc/{pid}/task/{pid}/sched")) == SLICE_NS  # the listener
            with socket.create_connection(("127.0.0.1", runtime.port), timeout=10) as chat:
                chat.sendall(
                    b"POST /chat HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
                    b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                    % (TOKEN.encode(), len(body), body)
                )
                seen = b""
                while b'"delta"' not in seen:  # the first text is out: the answer streams
                    piece = chat.recv(65536)
                    assert piece, seen
                    seen += piece
                streaming = run_threads(pid)
                upstream.go.set()
                assert upstream.tool_asked.wait(10), "the run never called its tool"
                between = run_threads(pid)
    finally:
        upstream.close()
    assert len(streaming) == 1 and set(streaming.values()) == {default}, streaming
    assert set(between.values()) == {SLICE_NS}, between
