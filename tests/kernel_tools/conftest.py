"""A temporary server root with one session workspace: ``work/`` and ``context/``."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernel_tools.paths import Workspace


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
