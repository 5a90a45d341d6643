"""A run carries its caller's permissions (issue 31.1, DESIGN 10.1), and the server's files are
read through its contents manager (issue 31.2).

A real Jupyter server whose Authorizer allows only the resource ``resolve``: the run it starts
(API chat, MCP ``ask``, a task's steps) records ``contents`` and ``kernels`` as refused in
``run.started.permissions`` and is not offered ``notebook_read``, ``notebook_variables`` or
``inspect_variable``; a call to one is refused without running. With the default Authorizer the
same calls run. Hidden notebooks are refused over MCP as ``/api/contents`` refuses them, and no
error quotes a file's bytes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jupyter_server.auth.authorizer import Authorizer

from jupyter_resolve.contracts.run_rows import RunQuery
from tests.conftest import Server
from tests.jupyter_resolve.mcp.test_mcp_server import connect
from tests.jupyter_resolve.notebook.live import make_notebook, run_in_kernel
from tests.jupyter_resolve.peer.peerclient import PEERS, rpc
from tests.scripting import call, script

pytestmark = pytest.mark.timeout(240)

GATED = ("notebook_read", "notebook_variables", "inspect_variable")
SECRET = "sk-secret-0123456789abcdefghij"
NONE = {"contents_read": False, "contents_write": False, "kernels_execute": False}
ALL = {"contents_read": True, "contents_write": True, "kernels_execute": True}


class OnlyResolve(Authorizer):
    """Whatever on ``resolve`` (chat, tasks, MCP); nothing on the server's files or kernels."""

    def is_authorized(self, handler: Any, user: Any, action: str, resource: str) -> bool:
        return resource == "resolve"


@pytest.fixture
def authorizer() -> type[Authorizer] | None:
    return OnlyResolve


@pytest.fixture
def jp_server_config(jp_server_config: dict[str, Any], authorizer: type | None) -> dict[str, Any]:
    if authorizer is None:
        return jp_server_config
    server_app = {**jp_server_config["ServerApp"], "authorizer_class": authorizer}
    return {**jp_server_config, "ServerApp": server_app}


async def notebook_with_kernel(serverapp: Any, root: Path) -> str:
    """``analysis.ipynb`` with a running kernel holding ``token``, started through the
    server's own session manager (the caller may not use /api/sessions)."""
    path = make_notebook(root)
    notebook = json.loads((root / path).read_text())
    notebook["cells"][0]["source"] = f"token = {SECRET!r}"
    (root / path).write_text(json.dumps(notebook))
    session = await serverapp.session_manager.create_session(
        path=path, name=path, type="notebook", kernel_name="python3"
    )
    await run_in_kernel(serverapp, session["kernel"]["id"], f"token = {SECRET!r}")
    return path


def reaching_turns(path: str) -> list[dict[str, Any]]:
    inspected = {"notebook": path, "name": "token"}
    return [
        call("notebook_read", path=path),
        call("notebook_variables", notebook=path),
        {"content": "", "tool_calls": [{"name": "inspect_variable", "arguments": inspected}]},
        {"content": "done"},
    ]


def run_events(gateway: Any, run_id: str) -> list[dict[str, Any]]:
    return [e.model_dump() for e in gateway.runs.get(run_id).events]


def assert_refused(events: list[dict[str, Any]]) -> None:
    """Recorded as refused, not offered, never run, and nothing of the notebook came back."""
    assert SECRET not in json.dumps(events)
    started_calls = [e["data"]["name"] for e in events if e["type"] == "tool.started"]
    assert not set(GATED) & set(started_calls), started_calls  # none began
    results = {e["data"]["name"]: e["data"] for e in events if e["type"] == "tool.completed"}
    assert set(results) == set(GATED)  # each call answered with an error result
    for result in results.values():
        assert result["ok"] is False and "not among the tools this run may use" in result["output"]
    started = events[0]["data"]
    assert not set(GATED) & set(started["tools"])
    assert started["permissions"] == NONE


async def test_a_chat_of_a_caller_without_contents_and_kernels_reaches_neither(
    server: Server, gateway: Any, jp_serverapp: Any, jp_root_dir: Path, tmp_path: Path
) -> None:
    path = await notebook_with_kernel(jp_serverapp, jp_root_dir)
    assert (await server.get(f"/api/contents/{path}")).status_code == 403
    script(gateway, tmp_path, *reaching_turns(path))
    stream = await server.chat("read my notebook")
    assert stream.of("run.completed")[0]["reason"] == "stop"
    run_id = stream.of("run.started")[0]["run_id"]
    assert_refused(run_events(gateway, run_id))


async def test_mcp_ask_of_a_caller_without_contents_and_kernels_reaches_neither(
    server: Server, gateway: Any, jp_serverapp: Any, jp_root_dir: Path, tmp_path: Path
) -> None:
    path = await notebook_with_kernel(jp_serverapp, jp_root_dir)
    script(gateway, tmp_path, *reaching_turns(path))
    async with connect(server, server.token) as client:
        answer = await client.call_tool("ask", {"prompt": "read my notebook"})
        notebook = await client.call_tool("notebook_read", {"path": path})
    assert notebook.is_error is True  # contents read is refused for the tool itself too
    run_id = (answer.structured_content or {})["run_id"]
    assert_refused(run_events(gateway, run_id))


async def test_a_facade_completion_carries_the_callers_permissions(
    server: Server, gateway: Any, jp_serverapp: Any, jp_root_dir: Path, tmp_path: Path
) -> None:
    path = await notebook_with_kernel(jp_serverapp, jp_root_dir)
    script(gateway, tmp_path, *reaching_turns(path))
    body = {"messages": [{"role": "user", "content": "read my notebook"}]}
    response = await server.post("/resolve/v1/chat/completions", body)
    assert response.status_code == 200, response.text
    assert_refused(run_events(gateway, response.headers["X-Resolve-Run-Id"]))


async def test_a_tasks_steps_carry_its_starters_permissions(
    server: Server, gateway: Any, jp_root_dir: Path, tmp_path: Path
) -> None:
    make_notebook(jp_root_dir)
    steps = [{"content": "VERDICT: accept", "soul": s} for s in ("planner", "specialist")]
    script(gateway, tmp_path, *steps)
    stream = await server.stream(
        "/resolve/api/tasks", {"goal": "look", "chain": ["planner", "specialist"]}
    )
    started = stream.of("run.started")
    assert len(started) == 2 and all(s["permissions"] == NONE for s in started)
    assert all("notebook_read" not in s["tools"] for s in started)
    owners = {s["owner"] for s in started}  # its starter's Jupyter user name, like permissions
    assert len(owners) == 1 and all(isinstance(o, str) and o for o in owners), owners


@pytest.mark.parametrize("authorizer", [None])
async def test_a_permitted_caller_is_offered_the_tools_and_they_run(
    server: Server, gateway: Any, jp_serverapp: Any, jp_root_dir: Path, tmp_path: Path
) -> None:
    path = await notebook_with_kernel(jp_serverapp, jp_root_dir)
    script(gateway, tmp_path, *reaching_turns(path))
    stream = await server.chat("read my notebook")
    started = stream.of("run.started")[0]
    assert started["permissions"] == ALL and set(GATED) <= set(started["tools"])
    done = {c["name"]: c for c in stream.of("tool.completed")}
    assert set(done) == set(GATED) and all(c["ok"] for c in done.values()), done
    assert SECRET in done["notebook_read"]["output"]  # read through the contents manager
    assert "token: str" in done["notebook_variables"]["output"]


@pytest.mark.parametrize("authorizer", [None])
async def test_hidden_notebooks_are_refused_as_the_contents_api_refuses_them(
    server: Server, gateway: Any, jp_root_dir: Path, tmp_path: Path
) -> None:
    (jp_root_dir / ".hidden").mkdir()
    make_notebook(jp_root_dir / ".hidden", "x.ipynb")
    assert (await server.get("/api/contents/.hidden/x.ipynb")).status_code == 404
    script(gateway, tmp_path, call("notebook_read", path=".hidden/x.ipynb"), {"content": "ok"})
    stream = await server.chat("read it")
    (agent,) = stream.of("tool.completed")
    assert agent["ok"] is False and "no notebook '.hidden/x.ipynb'" in agent["output"]
    async with connect(server, server.token) as client:
        hidden = await client.call_tool("notebook_read", {"path": ".hidden/x.ipynb"})
    assert hidden.is_error is True
    assert "no notebook '.hidden/x.ipynb'" in hidden.content[0].text  # type: ignore[union-attr]


@pytest.mark.parametrize("authorizer", [None])
async def test_no_error_quotes_a_files_bytes(
    server: Server, gateway: Any, jp_root_dir: Path, tmp_path: Path
) -> None:
    (jp_root_dir / ".private").mkdir()
    (jp_root_dir / ".private" / "apikeys.txt").write_text(f"{SECRET}\n")
    (jp_root_dir / "keys.ipynb").write_text(f"{SECRET}\n")
    # an MCP server's own stderr log, kept under the root's .resolve/ (health shows it redacted)
    (jp_root_dir / ".resolve" / "mcp").mkdir(parents=True, exist_ok=True)
    (jp_root_dir / ".resolve" / "mcp" / "time.stderr.log").write_text(f"token={SECRET}\n")
    paths = (".private/apikeys.txt", "keys.ipynb", ".resolve/mcp/time.stderr.log")
    script(gateway, tmp_path, *(call("notebook_read", path=p) for p in paths), {"content": "ok"})
    stream = await server.chat("read them")
    answers = [c["output"] for c in stream.of("tool.completed")]
    async with connect(server, server.token) as client:
        for path in paths:
            result = await client.call_tool("notebook_read", {"path": path})
            assert result.is_error is True
            answers.append(result.content[0].text)  # type: ignore[union-attr]
    assert len(answers) == 6 and "is not a notebook" in answers[0], answers
    assert all(SECRET[:8] not in answer for answer in answers), answers


@pytest.mark.parametrize("authorizer", [None])
async def test_hidden_files_are_not_attached_to_a_chat(
    server: Server, gateway: Any, jp_root_dir: Path, tmp_path: Path
) -> None:
    (jp_root_dir / ".private").mkdir()
    (jp_root_dir / ".private" / "apikeys.txt").write_text(f"{SECRET}\n")
    (jp_root_dir / "notes.txt").write_text("shown\n")
    assert (await server.get("/api/contents/.private/apikeys.txt")).status_code == 404
    script(gateway, tmp_path, {"content": "ok"})
    for body in (
        {"attachments": [".private/apikeys.txt"]},
        {"attachments": ["notes.txt", ".private/../.private/apikeys.txt"]},
        {"notebook": ".private/x.ipynb"},
    ):
        chat = {"messages": [{"role": "user", "content": "read"}], **body}
        response = await server.post("/resolve/api/chat", chat)
        assert response.status_code == 404, response.text
        assert SECRET not in response.text
    stream = await server.chat("read", attachments=["notes.txt"])  # a shown file still goes in
    assert stream.of("run.completed")[0]["reason"] == "stop"


A2A_MESSAGE = {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}


async def a2a_by_login(server: Server, gateway: Any) -> dict[str, Any]:
    """``run.started`` of a job sent over A2A with the Jupyter token."""
    request = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage"}
    async with server.client() as client:
        response = await client.post(
            "/resolve/peer/a2a",
            json={**request, "params": {"message": A2A_MESSAGE}},
            headers=server.auth,
        )
    assert response.status_code == 200, response.text
    started: dict[str, Any] = run_events(gateway, response.json()["result"]["task"]["id"])[0]
    return dict(started["data"])


@pytest.mark.parametrize("authorizer", [None])
@pytest.mark.parametrize("resolve_config", [{"peer_secrets": PEERS}])
async def test_an_a2a_job_of_a_permitted_login_is_offered_the_tools(
    server: Server, gateway: Any, tmp_path: Path
) -> None:
    script(gateway, tmp_path, {"content": "ok"})
    login = await a2a_by_login(server, gateway)
    assert login["permissions"] == ALL and set(GATED) <= set(login["tools"])


@pytest.mark.parametrize(
    "resolve_config", [{"peer_secrets": PEERS, "peer_tools": {"alpha": ["notebook_read"]}}]
)
async def test_a2a_jobs_carry_the_logins_permissions_or_the_peers_grant(
    server: Server, gateway: Any, tmp_path: Path
) -> None:
    script(gateway, tmp_path, {"content": "ok"}, {"content": "ok"})
    login = await a2a_by_login(server, gateway)
    assert login["permissions"] == NONE and not set(GATED) & set(login["tools"])
    signed = await rpc(server, "SendMessage", {"message": A2A_MESSAGE})
    peer = run_events(gateway, signed["result"]["task"]["id"])[0]["data"]
    assert peer["permissions"] == {**NONE, "contents_read": True}  # what its grant implies
    assert peer["tools"] == ["notebook_read"]


@pytest.mark.parametrize(("authorizer", "expected"), [(None, ALL), (OnlyResolve, NONE)])
async def test_a_delegated_run_carries_its_parents_permissions(
    server: Server, gateway: Any, tmp_path: Path, expected: dict[str, bool]
) -> None:
    delegation = {
        "name": "subagents.delegate",
        "arguments": {"soul": "data-analysis", "prompt": "x"},
    }
    script(
        gateway,
        tmp_path,
        {"soul": "specialist", "content": "", "tool_calls": [delegation]},
        {"soul": "specialist", "content": "done"},
        {"soul": "data-analysis", "content": "3 rows"},
    )
    stream = await server.chat("delegate", soul="specialist")
    assert stream.of("tool.completed")[0]["ok"] is True
    parent = stream.of("run.started")[0]
    child = next(r for r in gateway.runs.page(RunQuery()).runs if r.soul == "data-analysis")
    started = run_events(gateway, child.run_id)[0]["data"]
    assert parent["permissions"] == started["permissions"] == expected
    assert parent["owner"] and started["owner"] == parent["owner"]  # its starter's
    listed = {r.run_id: r.owner for r in gateway.runs.page(RunQuery()).runs}
    assert listed[child.run_id] == listed[parent["run_id"]] == parent["owner"]
