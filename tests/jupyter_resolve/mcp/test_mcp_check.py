"""`jupyter resolve check` lists the MCP servers' tools as its fifth list and fails on a soul
that names an MCP tool no configured server offers (DESIGN 3.4, 9.3)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

from .servers import TIME_SERVER, installed


def check(root: Path, servers: str) -> subprocess.CompletedProcess[str]:
    config = root / "cfg"
    config.mkdir(exist_ok=True)
    # where people keep it: the server's own config file
    (config / "jupyter_server_config.py").write_text(f"c.Resolve.mcp_servers = {servers}\n")
    env = {**os.environ, "PYTHONPATH": str(REPO), "JUPYTER_CONFIG_DIR": str(config)}
    return subprocess.run(
        [sys.executable, "-c", "from jupyter_resolve.cli import main; main()", "check"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_check_lists_mcp_tools_and_fails_on_a_soul_naming_a_missing_one(tmp_path: Path) -> None:
    servers = repr({"time": {"command": [installed(TIME_SERVER)]}})
    result = check(tmp_path, servers)
    assert result.returncode == 0, result.stdout + result.stderr
    line = next(x for x in result.stdout.splitlines() if x.startswith("mcp "))
    assert "mcp.time.convert_time" in line and "mcp.time.get_current_time" in line
    souls = tmp_path / ".resolve" / "souls"
    souls.mkdir(parents=True)
    (souls / "clock.md").write_text(
        "---\nname: clock\nrole: specialist\ndescription: x\n"
        "tools: [mcp.time.get_current_time, mcp.time.set_the_clock]\n---\nTell the time.\n"
    )
    result = check(tmp_path, servers)
    assert result.returncode == 1
    assert (
        "soul 'clock' names 'mcp.time.set_the_clock', which no configured MCP server offers"
        in result.stdout
    )
    assert "get_current_time', which" not in result.stdout


def test_check_fails_when_a_server_does_not_start(tmp_path: Path) -> None:
    code = "import sys; sys.stderr.write('no such database\\n'); sys.exit(2)"
    result = check(tmp_path, repr({"db": {"command": [sys.executable, "-c", code]}}))
    assert result.returncode == 1
    assert "MCP server 'db' did not start" in result.stdout
    assert "no such database" in result.stdout
