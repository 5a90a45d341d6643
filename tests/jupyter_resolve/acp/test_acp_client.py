"""The client side's permission answers where no HTTP test reaches: a run with no person
behind it (an A2A peer's) and a run that ends while the agent waits (jupyter_resolve/acp/
client.py, with the SDK's own models)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from acp import RequestError
from acp.schema import PermissionOption, ToolCallUpdate

from jupyter_resolve.acp.client import AgentClient, Files, Turn
from jupyter_resolve.contracts.permissions import RunPermissions
from jupyter_resolve.runs.approvals import release_approvals
from jupyter_resolve.runs.run import Run

OPTIONS = [
    PermissionOption(option_id="ok", name="Allow", kind="allow_once"),
    PermissionOption(option_id="no", name="Reject", kind="reject_once"),
]


def client_with(turn: Turn) -> AgentClient:
    return AgentClient({"acp-1": turn}, Files(None), timeout=30.0)


def a_turn(headless: bool, permissions: RunPermissions | None = None) -> Turn:
    run = Run(run_id="run-1", session_id="s", soul=None, model="none", budget=0, log=None)
    return Turn(run, "s", permissions or RunPermissions(), headless, Path("/srv/root"))


async def test_a_run_with_no_person_rejects_at_once() -> None:
    turn = a_turn(headless=True)
    call = ToolCallUpdate(tool_call_id="t1", title="Delete build/", kind="delete")
    answer = await client_with(turn).request_permission("acp-1", call, OPTIONS)
    assert answer.outcome.outcome == "selected" and answer.outcome.option_id == "no"
    approvals = [e.data for e in turn.run.events if e.type == "tool.approval"]
    assert [(a["state"], a["by"]) for a in approvals] == [("denied", "policy")]
    assert turn.run.events[0].type == "tool.requested"  # a call first seen in the request


async def test_a_run_that_ends_while_the_agent_waits_answers_cancelled() -> None:
    turn = a_turn(headless=False)
    call = ToolCallUpdate(tool_call_id="t2", title="Run tests")
    asking = asyncio.create_task(client_with(turn).request_permission("acp-1", call, OPTIONS))
    while "t2" not in turn.run.approvals:
        await asyncio.sleep(0.01)
    release_approvals(turn.run)  # what a cancel does before the run's task is stopped
    answer = await asking
    assert answer.outcome.outcome == "cancelled"
    states = [e.data["state"] for e in turn.run.events if e.type == "tool.approval"]
    assert states == ["waiting"]  # released, not decided


async def test_no_live_run_is_cancelled_and_files_need_a_server() -> None:
    client = AgentClient({}, Files(None), timeout=30.0)
    call = ToolCallUpdate(tool_call_id="t3")
    assert (await client.request_permission("gone", call, OPTIONS)).outcome.outcome == "cancelled"
    turn = a_turn(headless=False, permissions=RunPermissions(contents_read=True))
    with pytest.raises(RequestError, match="only inside a Jupyter server"):
        await client_with(turn).read_text_file("acp-1", "/srv/root/a.txt")
    done = [e.data for e in turn.run.events if e.type == "tool.completed"]
    assert done[0]["name"] == "fs.read_text_file" and done[0]["ok"] is False


class Contents:
    """A contents manager that serves every file: the permission is what refuses."""

    allow_hidden = False

    def should_list(self, name: str) -> bool:
        return True

    def is_hidden(self, path: str) -> bool:
        return False

    def get(self, path: str, **_: object) -> dict[str, str]:
        return {"format": "text", "content": "the file"}


async def test_the_runs_permissions_decide_what_an_agent_may_touch() -> None:
    reader = a_turn(headless=False, permissions=RunPermissions(contents_read=True))
    client = AgentClient({"acp-1": reader}, Files(Contents()), timeout=30.0)
    assert (await client.read_text_file("acp-1", "/srv/root/a.txt")).content == "the file"
    with pytest.raises(RequestError, match="may not write"):
        await client.write_text_file("acp-1", "/srv/root/a.txt", "x")
    nobody = a_turn(headless=False)
    client = AgentClient({"acp-1": nobody}, Files(Contents()), timeout=30.0)
    with pytest.raises(RequestError, match="may not read"):
        await client.read_text_file("acp-1", "/srv/root/a.txt")


@pytest.mark.parametrize(
    "permissions",
    [
        RunPermissions(contents_read=True, contents_write=True),
        RunPermissions(contents_read=True, kernels_execute=True),
        RunPermissions(),
    ],
)
async def test_a_terminal_needs_the_runs_permissions(permissions: RunPermissions) -> None:
    """Issue 44.3: with c.Resolve.acp_terminal on, a run whose caller may not read and write
    the files and run code in kernels gets no terminal (a command runs as the shell tool)."""

    class Terminals:  # would run the command: it must not be reached
        async def create(self, *_: object) -> None:
            raise AssertionError("a terminal was created")

    turn = a_turn(headless=False, permissions=permissions)
    turn.terminals = Terminals()
    with pytest.raises(RequestError, match="declined for this run") as refused:
        await client_with(turn).create_terminal("acp-1", "echo", ["hi"])
    assert "its caller may not" in str(refused.value)
