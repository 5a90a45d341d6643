"""The agent uses real MCP servers over stdio (DESIGN 9.3): mcp-server-time (PyPI) and
server-everything (npm), plus a hanging server and one that cannot start."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from jupyter_resolve.contracts.mcp_servers import WITHHELD
from tests.conftest import Server, Stream
from tests.scripting import call, script

from .servers import EVERYTHING, HANGING, TIME_SERVER, installed, kill_children

CANARY = "canary-mcp-env-7f3a9c1e"
BROKEN = "import sys; sys.stderr.write('broken server: no API key configured\\n'); sys.exit(3)"


@pytest.fixture
def resolve_config() -> dict[str, Any]:
    return {
        "mcp_servers": {
            "time": {"command": [installed(TIME_SERVER)]},
            "every": {
                "command": [installed(EVERYTHING), "stdio"],
                "env": {"RESOLVE_CANARY": CANARY},
            },
            "hang": {"command": [sys.executable, str(HANGING)]},
            "broken": {"command": [sys.executable, "-c", BROKEN]},
        },
        "mcp_start_timeout": 20.0,
    }


@asynccontextmanager
async def approving(server: Server, gateway: Any) -> AsyncIterator[list[str]]:
    """Approve, as a person would over the API, every call that waits while the block runs."""
    approved: list[str] = []

    async def loop() -> None:
        while True:
            for run in list(gateway.runs.runs.values()):
                for call_id in list(run.approvals):
                    if call_id not in approved:
                        approved.append(call_id)
                        path = f"/resolve/api/runs/{run.run_id}/approvals/{call_id}"
                        response = await server.post(path, {"decision": "approve"})
                        assert response.status_code == 200, response.text
            await asyncio.sleep(0.05)

    task = asyncio.create_task(loop())
    try:
        yield approved
    finally:
        task.cancel()


async def ask(server: Server, gateway: Any, tmp_path: Path, name: str, **args: Any) -> Stream:
    script(gateway, tmp_path, call(name, **args), {"content": "done"})
    async with approving(server, gateway):
        return await server.chat("use the MCP tool", session_id="s-mcp")


async def test_time_server_over_stdio_asks_then_runs(
    server: Server, gateway: Any, tmp_path: Path
) -> None:
    tools = {
        t["function"]["name"]: t for t in (await server.get("/resolve/api/tools")).json()["tools"]
    }
    listed = tools["mcp.time.get_current_time"]["function"]
    assert "timezone" in listed["parameters"]["properties"]
    assert "mcp.every.get-tiny-image" in tools and "mcp.hang.wait" in tools
    assert gateway.catalogue.schema("mcp.time.get_current_time").effect == "read"  # readOnlyHint
    assert gateway.catalogue.schema("mcp.every.toggle-simulated-logging").effect == "exec"
    stream = await ask(server, gateway, tmp_path, "mcp.time.get_current_time", timezone="UTC")
    assert [a["state"] for a in stream.of("tool.approval")] == ["waiting", "approved"]
    done = stream.of("tool.completed")[0]
    assert done["ok"] is True and done["name"] == "mcp.time.get_current_time"
    assert '"timezone": "UTC"' in done["output"] and "datetime" in done["output"]
    assert "mcp.time.get_current_time" in stream.events[0].data["tools"]


async def test_policy_overrides_the_ask(server: Server, gateway: Any, tmp_path: Path) -> None:
    gateway.config.approval_policy = {"mcp.every.echo": "auto", "mcp.every.get-sum": "deny"}
    stream = await ask(server, gateway, tmp_path, "mcp.every.echo", message="hello there")
    assert not stream.of("tool.approval")
    assert "hello there" in stream.of("tool.completed")[0]["output"]
    stream = await ask(server, gateway, tmp_path, "mcp.every.get-sum", a=1, b=2)
    assert stream.of("tool.approval")[-1]["state"] == "denied"
    assert stream.of("tool.completed")[0]["ok"] is False and not stream.of("tool.started")


async def test_an_image_reaches_the_client_as_mime(
    server: Server, gateway: Any, tmp_path: Path
) -> None:
    stream = await ask(server, gateway, tmp_path, "mcp.every.get-tiny-image")
    done = stream.of("tool.completed")[0]
    assert done["ok"] is True and done["mime"]["image/png"].startswith("iVBOR")
    assert "[shown to the person: image/png]" in done["output"]
    assert "iVBOR" not in done["output"]  # the model gets text, not the bytes
    links = await ask(server, gateway, tmp_path, "mcp.every.get-resource-links", count=2)
    assert "[resource demo://resource/" in links.of("tool.completed")[0]["output"]


async def test_the_env_secret_reaches_only_the_server(
    server: Server, gateway: Any, tmp_path: Path, jp_root_dir: Path
) -> None:
    stream = await ask(server, gateway, tmp_path, "mcp.every.get-env")
    output = stream.of("tool.completed")[0]["output"]
    # the server had it (its value was there to withhold), the event never did
    assert "RESOLVE_CANARY" in output and WITHHELD in output and CANARY not in output
    health = (await server.get("/resolve/api/health")).text
    assert CANARY not in health
    logs = "".join(p.read_text() for p in (jp_root_dir / ".resolve" / "runs").glob("*.jsonl"))
    assert "RESOLVE_CANARY" in logs and CANARY not in logs


async def test_killed_mid_call_is_an_error_and_the_next_call_works(
    server: Server, gateway: Any, tmp_path: Path
) -> None:
    script(
        gateway,
        tmp_path,
        call("mcp.every.trigger-long-running-operation", duration=30, steps=30),
        {"content": "done"},
    )

    async def kill_when_started() -> None:
        while not any(
            e.type == "tool.started" for r in gateway.runs.runs.values() for e in r.events
        ):
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.5)
        assert kill_children(str(EVERYTHING)) == 1

    killer = asyncio.create_task(kill_when_started())
    async with approving(server, gateway):
        stream = await server.chat("long one", session_id="s-kill")
    await killer
    done = stream.of("tool.completed")[0]
    assert done["ok"] is False and "MCP server 'every'" in done["output"]
    assert "connection closed" in done["output"] and "starts again" in done["output"]
    every = (await server.get("/resolve/api/health")).json()["mcp"]["every"]
    assert every["state"] == "failed" and "connection closed" in every["error"]
    again = await ask(server, gateway, tmp_path, "mcp.every.echo", message="back again")
    assert again.of("tool.completed")[0]["ok"] is True
    assert "back again" in again.of("tool.completed")[0]["output"]
    every = (await server.get("/resolve/api/health")).json()["mcp"]["every"]
    assert every["state"] == "ready" and every["starts"] == 2


async def test_a_server_that_never_answers_hits_the_tool_timeout(
    server: Server, gateway: Any, tmp_path: Path
) -> None:
    gateway.config.tool_timeout = 1.5
    stream = await ask(server, gateway, tmp_path, "mcp.hang.wait")
    done = stream.of("tool.completed")[0]
    assert done["ok"] is False
    assert "no answer to 'wait' within the tool timeout (1.5 s)" in done["output"]
    hang = (await server.get("/resolve/api/health")).json()["mcp"]["hang"]
    assert hang["state"] == "failed" and "got a call, never answering" in hang["stderr_tail"]


async def test_a_server_that_cannot_start_shows_in_health(server: Server, gateway: Any) -> None:
    broken = (await server.get("/resolve/api/health")).json()["mcp"]["broken"]
    assert broken["state"] == "failed" and broken["tools"] is None
    assert broken["command"] == sys.executable and "could not start" in broken["error"]
    assert "broken server: no API key configured" in broken["stderr_tail"]
    # its tools are unknown, not drift: chat still works
    assert (await server.get("/resolve/api/health")).json()["drift"] == []
    result = await gateway.mcp.call(_request("mcp.broken.anything"), timeout=5.0)
    assert result.ok is False and "could not start" in result.output


def _request(name: str) -> Any:
    from jupyter_resolve.contracts.bodies import ToolCallRequest

    return ToolCallRequest(run_id="run-x", call_id="c1", name=name, arguments={})
