"""Code the agent runs counts (issue 44.1, DESIGN 10.1): a real server per edge that starts runs
— chat, the facade, MCP ``ask`` (the Jupyter token and an MCP-scoped token), A2A (a login and a
signed peer), tasks, delegation — with the sandbox on and off.

The server's Authorizer grants only the resource ``resolve`` (an MCP-scoped token: ``contents``
read besides). Sandboxed, such a run is offered ``python``, and its code finds no file of the
server root (with ``contents`` read: the root, without a hidden file at any depth). Unsandboxed,
``python`` and ``shell`` are offered only to a caller who may read and write contents and execute
kernels: a call is refused, nothing runs (so an MCP-scoped token's ``ask`` cannot read the
server's Jupyter token from the parent process). The pure matrix is
``test_permissions_matrix.py``; ACP's pass is ``test_two_people_code.py``'s.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jupyter_server.auth.authorizer import Authorizer

from jupyter_resolve.contracts.bodies import ToolCallRequest
from jupyter_resolve.contracts.run_rows import RunQuery
from jupyter_resolve.scratch.sandbox import bwrap_available
from tests.conftest import REPO, Server
from tests.jupyter_resolve.mcp.test_mcp_server import connect
from tests.jupyter_resolve.mcp.test_mcp_token import make_token
from tests.jupyter_resolve.peer.peerclient import PEERS, invoke, poll_status, rpc
from tests.scripting import call, script

pytestmark = pytest.mark.timeout(240)

NONE = {"contents_read": False, "contents_write": False, "kernels_execute": False}
READ = {**NONE, "contents_read": True}
FULL = {"contents_read": True, "contents_write": True, "kernels_execute": True}
A2A_MESSAGE = {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "look"}]}

# file under the server root -> what it holds; the names starting with "hidden" are hidden paths
FILES = {
    "visible": ("notes/visible.txt", "MARK-visible"),
    "notebook": ("secret.ipynb", "MARK-notebook"),
    "hidden-git": ("proj/.git/config", "MARK-git"),
    "hidden-env": (".env", "MARK-env"),
    "hidden-deep": ("deep/a/.token", "MARK-deep"),
    "hidden-dir": ("deep/.cache/x.txt", "MARK-cache"),
}


OUTSIDE = REPO / "test-output" / "roots"


@pytest.fixture
def jp_root_dir() -> Iterator[Path]:
    """A server root outside the folders the sandbox hides anyway (the temporary folders, the
    home): that the root is left out must be the rule's doing."""
    OUTSIDE.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(dir=OUTSIDE))
    yield root
    shutil.rmtree(root, ignore_errors=True)


class OnlyResolve(Authorizer):
    """Whatever on ``resolve``; nothing on the server's files or kernels (MCP-scoped tokens
    keep what their scope gives)."""

    def is_authorized(self, handler: Any, user: Any, action: str, resource: str) -> bool:
        return resource == "resolve"


@pytest.fixture
def jp_server_config(jp_server_config: dict[str, Any]) -> dict[str, Any]:
    server_app = {**jp_server_config["ServerApp"], "authorizer_class": OnlyResolve}
    return {**jp_server_config, "ServerApp": server_app}


@pytest.fixture
def resolve_config() -> dict[str, Any]:
    return {"peer_secrets": PEERS, "peer_tools": {"alpha": ["python"]}}


@pytest.fixture(params=["bwrap", "none"])
def sandbox(request: pytest.FixtureRequest, gateway: Any, jp_root_dir: Path) -> str:
    if request.param == "bwrap" and not bwrap_available():
        pytest.skip("bubblewrap cannot create namespaces on this machine")
    gateway.kernels.sandbox = "bwrap" if request.param == "bwrap" else ""
    for path, text in FILES.values():
        (jp_root_dir / path).parent.mkdir(parents=True, exist_ok=True)
        (jp_root_dir / path).write_text(text)
    return str(request.param)


def probe(root: Path) -> dict[str, Any]:
    """A python call printing ``name=seen`` for each file it could read, else ``name=-``."""
    paths = {name: str(root / path) for name, (path, _) in FILES.items()}
    marks = {name: mark for name, (_, mark) in FILES.items()}
    code = (
        f"for name, path in {paths!r}.items():\n"
        "    try:\n"
        "        text = open(path).read()\n"
        "    except Exception:\n"
        "        text = ''\n"
        f"    print(f'{{name}}=' + ('seen' if {marks!r}[name] in text else '-'))\n"
    )
    return call("python", code=code)


def run_events(gateway: Any, run_id: str) -> list[dict[str, Any]]:
    return [e.model_dump() for e in gateway.runs.get(run_id).events]


def seen(output: str) -> set[str]:
    return {line.split("=")[0] for line in output.splitlines() if line.endswith("=seen")}


def check(events: list[dict[str, Any]], permissions: dict[str, bool], sandbox: str) -> None:
    """What DESIGN 10.1 says of a run with ``permissions`` whose python call was the probe."""
    started = events[0]["data"]
    assert started["permissions"] == permissions
    (result,) = [e["data"] for e in events if e["type"] == "tool.completed"]
    blob = json.dumps([e for e in events if e["type"] in ("tool.output", "tool.completed")])
    if sandbox == "none" and permissions != FULL:
        assert "python" not in started["tools"] and "shell" not in started["tools"]
        assert result["ok"] is False and "not among the tools" in result["output"]
        assert not any(e["type"] == "tool.started" for e in events)  # nothing ran
        assert "MARK-" not in blob
        return
    assert "python" in started["tools"] and result["ok"] is True, result
    expected = {"visible", "notebook"} if permissions["contents_read"] else set()
    assert seen(result["output"]) == expected, result["output"]
    assert all(mark not in blob for name, (_, mark) in FILES.items() if name.startswith("hidden"))


async def test_chat(
    server: Server, gateway: Any, jp_root_dir: Path, tmp_path: Path, sandbox: str
) -> None:
    script(gateway, tmp_path, probe(jp_root_dir), {"content": "done"})
    stream = await server.chat("look", session_id=f"s-chat-{sandbox}")
    check(run_events(gateway, stream.of("run.started")[0]["run_id"]), NONE, sandbox)


async def test_shell_too(
    server: Server, gateway: Any, jp_root_dir: Path, tmp_path: Path, sandbox: str
) -> None:
    files = " ".join(str(jp_root_dir / path) for path, _ in FILES.values())
    script(gateway, tmp_path, call("shell", command=f"cat {files}"), {"content": "done"})
    stream = await server.chat("look", session_id=f"s-shell-{sandbox}")
    (result,) = stream.of("tool.completed")
    if sandbox == "none":
        assert result["ok"] is False and "not among the tools" in result["output"]
    assert "MARK-" not in json.dumps(stream.of("tool.completed"))


async def test_facade(
    server: Server, gateway: Any, jp_root_dir: Path, tmp_path: Path, sandbox: str
) -> None:
    script(gateway, tmp_path, probe(jp_root_dir), {"content": "done"})
    body = {"messages": [{"role": "user", "content": "look"}]}
    response = await server.post("/resolve/v1/chat/completions", body)
    assert response.status_code == 200, response.text
    check(run_events(gateway, response.headers["X-Resolve-Run-Id"]), NONE, sandbox)


@pytest.mark.parametrize("scoped", [False, True], ids=["jupyter-token", "mcp-scoped-token"])
async def test_mcp_ask(
    server: Server, gateway: Any, jp_root_dir: Path, tmp_path: Path, sandbox: str, scoped: bool
) -> None:
    script(gateway, tmp_path, probe(jp_root_dir), {"content": "done"})
    token = (await make_token(server))["token"] if scoped else server.token
    async with connect(server, token) as client:
        answer = await client.call_tool("ask", {"prompt": "look"})
    run_id = (answer.structured_content or {})["run_id"]
    check(run_events(gateway, run_id), READ if scoped else NONE, sandbox)


async def test_a2a_login(
    server: Server, gateway: Any, jp_root_dir: Path, tmp_path: Path, sandbox: str
) -> None:
    script(gateway, tmp_path, probe(jp_root_dir), {"content": "done"})
    request = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage"}
    async with server.client() as client:
        response = await client.post(
            "/resolve/peer/a2a",
            json={**request, "params": {"message": A2A_MESSAGE}},
            headers=server.auth,
        )
    assert response.status_code == 200, response.text
    run_id = response.json()["result"]["task"]["id"]
    run = gateway.runs.get(run_id)
    if run.task is not None:
        await run.task
    check(run_events(gateway, run_id), NONE, sandbox)


async def test_a2a_signed_peer_granted_python(
    server: Server, gateway: Any, jp_root_dir: Path, tmp_path: Path, sandbox: str
) -> None:
    """Its run has what the grant implies (python: no contents read); unsandboxed the job is
    refused outright (a peer's exec tools need the sandbox)."""
    script(gateway, tmp_path, probe(jp_root_dir), {"content": "done"})
    submitted = await invoke(server, "exec.submit", {"prompt": "look"})
    if sandbox == "none":
        assert submitted.status_code == 503 and submitted.json()["code"] == "peer_needs_sandbox"
        return
    job_id = submitted.json()["job_id"]
    assert (await poll_status(server, job_id))["state"] == "succeeded"
    check(run_events(gateway, job_id), NONE, sandbox)
    assert (await rpc(server, "GetTask", {"id": job_id}))["result"]["id"] == job_id


async def test_tasks(
    server: Server, gateway: Any, jp_root_dir: Path, tmp_path: Path, sandbox: str
) -> None:
    turn = {**probe(jp_root_dir), "soul": "specialist"}
    script(gateway, tmp_path, turn, {"content": "VERDICT: accept", "soul": "specialist"})
    stream = await server.stream("/resolve/api/tasks", {"goal": "look", "chain": ["specialist"]})
    (step,) = stream.of("run.started")
    check(run_events(gateway, step["run_id"]), NONE, sandbox)


async def test_delegation(
    server: Server, gateway: Any, jp_root_dir: Path, tmp_path: Path, sandbox: str
) -> None:
    """The parent (specialist) delegates; the child (data-analysis) runs the probe with its
    parent's permissions. Unsandboxed neither is offered python."""
    delegate = {"name": "subagents.delegate", "arguments": {"soul": "data-analysis", "prompt": "x"}}
    delegation = {"soul": "specialist", "content": "", "tool_calls": [delegate]}
    script(
        gateway,
        tmp_path,
        delegation,
        {"soul": "specialist", "content": "done"},
        {**probe(jp_root_dir), "soul": "data-analysis"},
        {"soul": "data-analysis", "content": "looked"},
    )
    await server.chat("delegate", soul="specialist", session_id=f"s-deleg-{sandbox}")
    child = next(r for r in gateway.runs.page(RunQuery()).runs if r.soul == "data-analysis")
    check(run_events(gateway, child.run_id), NONE, sandbox)


async def test_a_call_past_the_offer_is_refused_unsandboxed_too(
    server: Server, gateway: Any, jp_root_dir: Path, tmp_path: Path, sandbox: str
) -> None:
    """An external agent's terminal runs as the shell tool, whatever the run was offered: the
    shell's own implementation checks the run's permissions against the sandbox too."""
    script(gateway, tmp_path, {"content": "done"})
    stream = await server.chat("hi", session_id=f"s-past-{sandbox}")
    run_id = stream.of("run.started")[0]["run_id"]
    files = " ".join(str(jp_root_dir / path) for path, _ in FILES.values())
    arguments = {"command": f"cat {files}"}
    request = ToolCallRequest(run_id=run_id, call_id="c1", name="shell", arguments=arguments)
    result = await gateway.tools.call(request, ["shell"])
    if sandbox == "none":
        assert result.ok is False and "not sandboxed" in result.output, result.output
    assert "MARK-" not in result.output
