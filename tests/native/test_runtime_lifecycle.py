"""agent-httpd never outlives the process that started it (the gateway may die without
stopping it: SIGKILL, or a SIGINT a server without a terminal ignores, as under JupyterHub)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import runtime_binary

PARENT = r"""
import os, subprocess, sys, time
env = {"PATH": os.environ.get("PATH", "/usr/bin")}
r, w = os.pipe()
os.write(w, b"t\n")
os.close(w)
p = subprocess.Popen(
    [sys.argv[1], "--port", "0", "--inference-url", "http://127.0.0.1:9/v1/chat/completions",
     "--tools-url", "http://127.0.0.1:9/tools", "--token-fd", str(r)],
    env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True,
    pass_fds=(r,),
)
p.stdout.readline()
print(p.pid, flush=True)
time.sleep(120)
"""


def gone(pid: int) -> bool:
    status = Path(f"/proc/{pid}/status")
    return not status.exists() or "zombie" in status.read_text()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="parent-death signal is Linux")
def test_runtime_stops_when_its_parent_is_killed() -> None:
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, runtime_binary()], stdout=subprocess.PIPE, text=True
    )
    assert parent.stdout is not None
    pid = int(parent.stdout.readline())
    assert not gone(pid)
    parent.kill()
    parent.wait()
    for _ in range(100):
        if gone(pid):
            break
        time.sleep(0.05)
    else:
        os.kill(pid, 9)
        raise AssertionError("agent-httpd outlived its parent")
