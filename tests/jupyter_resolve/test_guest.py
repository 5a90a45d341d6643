"""jupyter_resolve as a guest in a server others share (issue 41): a bad setting disables it
with one line and the server serves on; stopping never raises, whatever setup reached, and
ends a start under way; what a server owns (its runtime, its kernels' token) stays that
server's, never the process's ``os.environ``; the start's gc.freeze is once per process and
only in a server's real start."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, Server
from tests.launcher import JupyterServer

HOST = "tests.jupyter_resolve.guest_host"


def host(mode: str, workdir: Path) -> tuple[dict[str, Any], str]:
    """guest_host.py's report, and what the process wrote on stderr."""
    done = subprocess.run(
        [sys.executable, "-m", HOST, mode, str(workdir)],
        cwd=REPO,
        env={k: v for k, v in os.environ.items() if not k.startswith("JUPYTER_RESOLVE_")},
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return report, done.stderr


def gone(pid: int) -> bool:
    try:
        return "zombie" in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return True


def test_an_invalid_setting_disables_the_extension_in_one_line(tmp_path: Path) -> None:
    with JupyterServer(tmp_path / "server", argv=["--Resolve.provider=nope"]) as server:
        assert server.http is not None
        health = server.http.get(f"{server.url}/resolve/api/health")
        assert health.status_code == 200
        assert health.json()["ok"] is False
        assert "'provider'" in health.json()["disabled"]
        assert health.json()["config_problems"] == [health.json()["disabled"]]
        chat = server.http.post(f"{server.url}/resolve/api/chat", json={"messages": []})
        assert chat.status_code == 503
        assert chat.json()["error"]["code"] == "disabled"
        assert server.http.get(f"{server.url}/api/kernels").status_code == 200  # it serves on
    log = server.log_path.read_text(errors="replace")
    errors = [line for line in log.splitlines() if "jupyter-resolve is disabled" in line]
    assert len(errors) == 1, log
    assert "invalid setting: The 'provider' trait of a Resolve instance" in errors[0]
    assert "Traceback" not in log  # neither at start nor at stop


def test_two_servers_in_one_process_keep_what_is_theirs(tmp_path: Path) -> None:
    report, stderr = host("two", tmp_path)
    first, second = report["pids"]
    assert first and second and first != second
    for kernel, url, token in zip(report["kernels"], report["urls"], report["tokens"], strict=True):
        assert kernel == {"JUPYTER_RESOLVE_URL": url, "JUPYTER_RESOLVE_TOKEN": token}
    assert report["environ_while_serving"] == [] and report["environ_after"] == []
    assert report["left"] == []  # each server's stop ended its own runtime
    frozen_first, frozen_second = report["frozen"]
    assert frozen_first > 10_000  # the first real start froze the process's objects ...
    assert frozen_second <= frozen_first  # ... and the second did not freeze again
    assert "Traceback" not in stderr


def test_a_server_stopped_while_its_runtime_starts_leaves_none(tmp_path: Path) -> None:
    report, stderr = host("quick-stop", tmp_path)
    assert report == {"state": "stopped", "left": []}
    assert "Event loop is closed" not in stderr
    assert "Traceback" not in stderr


def test_a_runtime_whose_server_never_stopped_goes_with_the_process(tmp_path: Path) -> None:
    report, _ = host("no-stop", tmp_path)
    deadline = time.monotonic() + 30  # not a timing assertion: a bound on the wait
    while not gone(report["pid"]) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert gone(report["pid"])


@pytest.fixture
def resolve_config() -> dict[str, Any]:
    return {"freeze_startup_objects": True}


async def test_an_in_process_server_never_freezes_the_process(
    server: Server, jp_serverapp: Any
) -> None:
    await jp_serverapp._post_start()  # the extensions' start hooks, as ServerApp.start() runs them
    health = await server.get("/resolve/api/health")
    assert health.json()["runtime"]["state"] == "running"
    assert gc.get_freeze_count() == 0  # pytest-jupyter's server has no listener of its own


async def test_stopping_a_server_whose_setup_never_finished_does_not_raise(
    jp_serverapp: Any,
) -> None:
    (app,) = jp_serverapp.extension_manager.extension_apps["jupyter_resolve"]
    gateway, app.gateway = app.gateway, None  # as when initialize_settings raised before it
    await app.stop_extension()
    app.gateway = gateway  # stopped with the server
