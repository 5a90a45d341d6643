"""``c.Resolve.acp_terminal``: an agent's ``terminal/*`` runs as the shell tool does, in the
session's scratch kernel (a real server, a real kernel); and the agent stops with the server."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from tests.conftest import Server
from tests.launcher import JupyterServer

AGENTS = Path(__file__).parent / "agents"


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not stat.exists() or stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"


async def test_terminal_runs_in_the_scratch_kernel_and_the_agent_stops_with_the_server(
    tmp_path: Path,
) -> None:
    agent = {
        "command": [sys.executable, str(AGENTS / "bench_agent.py")],
        "env": {"BENCH_STATE": str(tmp_path / "agent-state")},
    }
    config = {"Resolve": {"acp_agents": {"bench": agent}, "acp_terminal": True}}
    with JupyterServer(tmp_path, config=config, ready="health") as jupyter:
        server = Server(jupyter.url, jupyter.token)
        stream = await server.chat("terminal", agent="bench", session_id="s-term")
        assert stream.text() == "terminal:0:hi there", stream.text()
        requested = stream.of("tool.requested")[0]
        assert requested == {
            "run_id": stream.events[0].data["run_id"],
            "call_id": "term-1",
            "name": "terminal",
            "arguments": {"command": "echo hi there"},
        }
        done = stream.of("tool.completed")[0]
        assert done["ok"] is True and "[exit code 0]" in done["output"]
        assert stream.events[-1].data["reason"] == "stop"
        # in the session's workspace: work/ is the kernel's folder
        assert (jupyter.root / ".resolve" / "sessions" / "s-term" / "work").is_dir()
        pid = (await server.get("/resolve/api/health")).json()["agents"]["bench"]["pid"]
        assert isinstance(pid, int) and alive(pid)
    assert not alive(pid)  # stopped with the server
