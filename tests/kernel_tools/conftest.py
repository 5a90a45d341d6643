"""A temporary server root with one session workspace (``work/`` and ``context/``), and a real
ipykernel started in it."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from jupyter_client.blocking.client import BlockingKernelClient
from jupyter_client.manager import KernelManager

from kernel_tools.paths import Workspace

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def server_root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    root.mkdir()
    return root


@pytest.fixture
def session(server_root: Path) -> Path:
    session = server_root / ".resolve" / "sessions" / "s1"
    (session / "work").mkdir(parents=True)
    (session / "context").mkdir()
    note = session / "context" / "input.txt"
    note.write_text("alpha\nbeta\n")
    note.chmod(0o400)
    return session


@pytest.fixture
def ws(session: Path, server_root: Path) -> Workspace:
    return Workspace(str(session), str(server_root))


@pytest.fixture
def work(session: Path) -> Path:
    return session / "work"


@pytest.fixture
def kernel(session: Path) -> Iterator[BlockingKernelClient]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": str(REPO),
        "HOME": str(session),
    }
    km = KernelManager(kernel_name="python3")
    km.start_kernel(cwd=str(session / "work"), env=env)
    client = km.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=60)
        yield client
    finally:
        client.stop_channels()
        km.shutdown_kernel(now=True)
