"""A real `jupyter server` process, driven the way the README says: curl streams a chat.

Also checks the runtime's lifecycle: started with the server, stopped with it.
"""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.launcher import JupyterServer


@pytest.fixture
def server_args() -> list[str]:
    return []


@pytest.fixture
def jupyter_server(
    tmp_path: Path, server_args: list[str]
) -> Iterator[tuple[str, str, subprocess.Popen[bytes]]]:
    env = {"HOME": str(tmp_path)}
    with JupyterServer(tmp_path, argv=server_args, env=env) as server:
        assert server.proc is not None
        yield server.url, server.token, server.proc


def curl(*args: str) -> str:
    return subprocess.run(
        ["curl", "-sS", "-N", "--max-time", "30", *args],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_curl_streams_a_scripted_answer_and_runtime_stops_with_server(
    jupyter_server: tuple[str, str, subprocess.Popen[bytes]],
) -> None:
    base, token, proc = jupyter_server
    out = curl(
        "-H",
        f"Authorization: token {token}",
        "-d",
        '{"messages":[{"role":"user","content":"hi"}]}',
        f"{base}/resolve/api/chat",
    )
    assert out.startswith("id: 1\nevent: run.started\n")
    assert "event: run.completed" in out
    assert "offline scripted model" in out
    health = json.loads(curl("-H", f"Authorization: token {token}", f"{base}/resolve/api/health"))
    assert health["ok"] is True
    pid = health["runtime"]["pid"]
    assert Path(f"/proc/{pid}").exists()
    proc.send_signal(signal.SIGTERM)
    proc.wait(20)
    deadline = time.monotonic() + 5
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    status = Path(f"/proc/{pid}/status")
    assert not status.exists() or "zombie" in status.read_text()


FROZEN = re.compile(r"the (\d+) objects of the server's start are out of the garbage collector")


def _frozen(log: Path, wait: float) -> int | None:
    """The count in the server's freeze line, waiting up to ``wait`` seconds for it."""
    deadline = time.monotonic() + wait
    while True:
        match = FROZEN.search(log.read_text(errors="replace"))
        if match or time.monotonic() > deadline:
            return int(match.group(1)) if match else None
        time.sleep(0.1)


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_the_servers_start_is_kept_out_of_full_collections(
    jupyter_server: tuple[str, str, subprocess.Popen[bytes]], tmp_path: Path
) -> None:
    base, token, _ = jupyter_server
    frozen = _frozen(tmp_path / "server.log", wait=30)
    assert frozen is not None and frozen > 10_000  # jupyter_server and ours, at the least
    out = curl("-H", f"Authorization: token {token}", f"{base}/resolve/api/health")
    assert json.loads(out)["ok"] is True  # and the server goes on serving


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
@pytest.mark.parametrize("server_args", [["--Resolve.freeze_startup_objects=False"]])
def test_freezing_the_start_can_be_turned_off(
    jupyter_server: tuple[str, str, subprocess.Popen[bytes]], tmp_path: Path
) -> None:
    base, token, _ = jupyter_server
    deadline = time.monotonic() + 30
    while "agent-httpd" not in (tmp_path / "server.log").read_text(errors="replace"):
        assert time.monotonic() < deadline, "the runtime did not start"
        time.sleep(0.1)
    curl("-H", f"Authorization: token {token}", f"{base}/resolve/api/health")
    assert _frozen(tmp_path / "server.log", wait=2) is None
