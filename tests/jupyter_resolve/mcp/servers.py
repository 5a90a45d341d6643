"""The MCP servers the tests use, installed by `make setup`: mcp-server-time (PyPI) beside the
interpreter, server-everything and the Inspector (npm) under the venv's mcp-node/."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

VENV_BIN = Path(sys.executable).parent
NODE_BIN = VENV_BIN.parent / "mcp-node" / "node_modules" / ".bin"
TIME_SERVER = VENV_BIN / "mcp-server-time"
EVERYTHING = NODE_BIN / "mcp-server-everything"
INSPECTOR = NODE_BIN / "mcp-inspector"
HANGING = Path(__file__).with_name("hanging_server.py")


def installed(path: Path) -> str:
    if not path.exists():
        pytest.fail(f"{path} is missing: `make setup` installs it")
    return str(path)


def children(marker: str) -> list[int]:
    """Processes this one started whose command line holds ``marker``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().decode(errors="replace")
        except (OSError, IndexError):
            continue
        if int(stat[1]) == os.getpid() and marker in cmdline:
            found.append(int(entry))
    return found


def kill_children(marker: str) -> int:
    pids = children(marker)
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    return len(pids)
