"""A real open-source ACP agent nobody here wrote: OpenCode (npm, installed by `make setup`),
hosted by a real server, on a local fake OpenAI-compatible model (fake_model.py), offline.

It reads a file with its own tool (outside this server's control: the run records what it
says it did), and its edit asks permission: a person approves through the approvals endpoint,
then OpenCode writes the file."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import SSE, Server
from tests.jupyter_resolve.mcp.servers import installed
from tests.launcher import JupyterServer, free_port, start_process, stop_process

OPENCODE = Path(sys.executable).parent.parent / "acp-node" / "node_modules" / ".bin" / "opencode"
FAKE_MODEL = Path(__file__).with_name("fake_model.py")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[JupyterServer, Server]]:
    program = installed(OPENCODE)
    work = tmp_path_factory.mktemp("opencode")
    root = work / "root"
    root.mkdir()
    port = free_port()
    model = start_process([sys.executable, str(FAKE_MODEL), str(port), str(root)])
    provider = {
        "npm": "@ai-sdk/openai-compatible",
        "name": "Fake",
        "options": {"baseURL": f"http://127.0.0.1:{port}/v1", "apiKey": "not-a-key"},
        "models": {"m1": {"name": "m1"}},
    }
    settings = {"provider": {"fake": provider}, "model": "fake/m1", "permission": {"edit": "ask"}}
    (work / "opencode.json").write_text(json.dumps(settings))
    env = {
        "HOME": str(work / "home"),
        "OPENCODE_CONFIG": str(work / "opencode.json"),
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
    }
    agents = {"opencode": {"command": [program, "acp"], "env": env, "description": "OpenCode"}}
    config = {"Resolve": {"acp_agents": agents, "acp_start_timeout": 60.0}}
    try:
        with JupyterServer(work, config=config, ready="health") as jupyter:
            yield jupyter, Server(jupyter.url, jupyter.token)
    finally:
        stop_process(model)


def waiting(event: SSE) -> bool:
    return event.event == "tool.approval" and event.data["state"] == "waiting"


async def test_opencode_reads_with_its_own_tool(served: tuple[JupyterServer, Server]) -> None:
    jupyter, server = served
    (jupyter.root / "data.txt").write_text("line one of the data\n")
    stream = await server.chat("read the data", agent="opencode", session_id="s-oc")
    assert stream.status == 200, stream.body
    assert stream.events[0].data["agent"] == "opencode"
    requested = stream.of("tool.requested")[0]
    assert requested["name"] == "read" and requested["kind"] == "read"
    done = stream.of("tool.completed")[0]
    assert done["ok"] is True and "line one of the data" in done["output"]
    assert "done:" in stream.text() and "line one of the data" in stream.text()
    assert stream.events[-1].data["reason"] == "stop"


async def test_opencode_asks_before_it_writes(served: tuple[JupyterServer, Server]) -> None:
    jupyter, server = served
    first = await server.chat("now write it", agent="opencode", session_id="s-oc", until=waiting)
    approval = first.of("tool.approval")[0]
    assert approval["name"] == "edit" and approval["state"] == "waiting"
    assert {"allow_once", "reject_once"} <= {o["kind"] for o in approval["options"]}
    target = jupyter.root / "from-opencode.txt"
    assert not target.exists()
    run_id, call_id = first.events[0].data["run_id"], approval["call_id"]
    decided = await server.post(
        f"/resolve/api/runs/{run_id}/approvals/{call_id}", {"decision": "approve"}
    )
    assert decided.status_code == 200, decided.text
    stream = await server.stream(f"/resolve/api/runs/{run_id}/events", method="GET")
    assert stream.of("tool.approval")[-1]["state"] == "approved"
    assert stream.events[-1].data["reason"] == "stop"
    assert target.read_text() == "written by opencode"
