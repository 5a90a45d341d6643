"""The server's Authorizer decides every /resolve/api/* request (issue 14 item 5, DESIGN 9.4).

Each test starts a real Jupyter server with ``ServerApp.authorizer_class`` set to one of the
Authorizers below and talks to it with the server's own token: authentication passes, the
Authorizer says no. Resource ``resolve``: read for GETs, execute for chat, tasks, cancels and
approvals, write for promotions; ``contents`` read when a request names a file or notebook.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
from jupyter_server.auth.authorizer import Authorizer

from jupyter_resolve.artifacts.records import PromoteRequest
from jupyter_resolve.contracts.bodies import ChatRequest
from jupyter_resolve.contracts.run_rows import RunQuery
from tests.conftest import Server
from tests.jupyter_resolve.artifacts.test_api import make_notebook, store_files
from tests.jupyter_resolve.test_contracts import public_routes
from tests.scripting import call, script

CHAT = {"messages": [{"role": "user", "content": "hi"}]}


class DenyAll(Authorizer):
    def is_authorized(self, handler: Any, user: Any, action: str, resource: str) -> bool:
        return False


class ReadOnly(Authorizer):
    def is_authorized(self, handler: Any, user: Any, action: str, resource: str) -> bool:
        return action == "read"


class NoContents(Authorizer):
    """Everything on resolve (and kernels), nothing on the server's files."""

    def is_authorized(self, handler: Any, user: Any, action: str, resource: str) -> bool:
        return resource != "contents"


class ContentsReadOnly(Authorizer):
    def is_authorized(self, handler: Any, user: Any, action: str, resource: str) -> bool:
        return resource != "contents" or action == "read"


@pytest.fixture
def authorizer() -> type[Authorizer]:
    return DenyAll


@pytest.fixture
def jp_server_config(jp_server_config: dict[str, Any], authorizer: type) -> dict[str, Any]:
    server_app = {**jp_server_config["ServerApp"], "authorizer_class": authorizer}
    return {**jp_server_config, "ServerApp": server_app}


def marker_turn(marker: Path) -> dict[str, Any]:
    """A model turn that runs Python writing ``marker``: proof that code ran."""
    return call("python", code=f"open({str(marker)!r}, 'w').write('ran')")


async def test_deny_all_refuses_every_public_route(
    server: Server, gateway: Any, tmp_path: Path, jp_root_dir: Path
) -> None:
    marker = tmp_path / "ran.txt"
    script(gateway, tmp_path, marker_turn(marker), {"content": "done"})
    (jp_root_dir / "private.txt").write_text("secret")
    assert (await server.get("/api/contents")).status_code == 403  # the Authorizer is on
    bodies = {
        "/resolve/api/chat": CHAT,
        "/resolve/v1/chat/completions": CHAT,
        "/resolve/api/tasks": {"goal": "run python"},
        "/resolve/api/artifacts": {"file": "private.txt"},
    }
    async with server.client() as client:
        for method, path in public_routes():
            body = bodies.get(path, {}) if method != "GET" else None
            response = await client.request(
                method,
                path,
                json=body,
                headers=server.auth,
            )
            assert response.status_code == 403, (method, path, response.text)
            answer = response.json()
            # the facade's errors have OpenAI's shape
            message = answer["error"]["message"] if path.startswith("/resolve/v1") else answer
            assert "not authorized" in (message if isinstance(message, str) else message["message"])
    assert not marker.exists()
    assert gateway.runs.runs == {}
    assert store_files(jp_root_dir) == []


@pytest.mark.parametrize("authorizer", [ReadOnly])
async def test_read_only_reads_and_lists_but_starts_and_changes_nothing(
    server: Server, gateway: Any, tmp_path: Path, jp_root_dir: Path
) -> None:
    marker = tmp_path / "ran.txt"
    script(gateway, tmp_path, {"content": "an answer"})
    run = gateway.start_chat(ChatRequest.model_validate({**CHAT, "session_id": "s-read"}))
    async for _ in run.watch():
        pass
    promoted = gateway.artifacts.promote(
        PromoteRequest(bundle={"text/plain": "kept"}), created_by="test"
    )
    art_id = promoted.manifest.id
    for path in (
        "/resolve/api/health",
        "/resolve/api/tools",
        "/resolve/api/souls",
        "/resolve/api/runs",
        "/resolve/api/runs?session_id=s-read",
        f"/resolve/api/runs/{run.run_id}/events",
        "/resolve/api/artifacts",
        f"/resolve/api/artifacts/{art_id}",
        f"/resolve/api/artifacts/{art_id}/content",
    ):
        response = await server.get(path)
        assert response.status_code == 200, (path, response.text)
    assert (await server.get("/resolve/api/tasks/task-x/events")).status_code == 404

    script(gateway, tmp_path, marker_turn(marker), {"content": "done"})
    for path, body in (
        ("/resolve/api/chat", CHAT),
        ("/resolve/v1/chat/completions", CHAT),
        ("/resolve/api/tasks", {"goal": "run python"}),
        ("/resolve/api/artifacts", {"bundle": {"text/plain": "new"}}),
        (f"/resolve/api/runs/{run.run_id}/cancel", {}),
        (f"/resolve/api/runs/{run.run_id}/approvals/call-1", {"decision": "approve"}),
        ("/resolve/api/tasks/task-x/cancel", {}),
    ):
        response = await server.post(path, body)
        assert response.status_code == 403, (path, response.text)
    assert not marker.exists()
    assert [r.run_id for r in gateway.runs.page(RunQuery()).runs] == [run.run_id]
    listed = (await server.get("/resolve/api/artifacts")).json()["artifacts"]
    assert [a["id"] for a in listed] == [art_id]


@pytest.mark.parametrize("authorizer", [NoContents])
async def test_naming_a_file_or_notebook_needs_contents_read(
    server: Server, gateway: Any, tmp_path: Path, jp_root_dir: Path
) -> None:
    (jp_root_dir / "notes.txt").write_text("private notes")
    make_notebook(jp_root_dir)
    work = jp_root_dir / ".resolve" / "sessions" / "s-own" / "work"
    work.mkdir(parents=True)
    (work / "result.txt").write_text("made by the agent")
    script(gateway, tmp_path, {"content": "answer"})

    for extra in ({"attachments": ["notes.txt"]}, {"notebook": "analysis.ipynb"}):
        refused = await server.post("/resolve/api/chat", {**CHAT, "session_id": "s-files", **extra})
        assert refused.status_code == 403, refused.text
        assert "contents" in refused.json()["message"]
    assert gateway.runs.runs == {}
    assert not (jp_root_dir / ".resolve" / "sessions" / "s-files").exists()
    allowed = await server.stream("/resolve/api/chat", CHAT)
    assert allowed.status == 200 and "answer" in allowed.text()

    for body in (
        {"file": "notes.txt"},
        {"notebook": "analysis.ipynb", "cell_id": "plot", "output_index": 0},
        {"bundle": {"text/plain": "x"}, "notebook": "analysis.ipynb", "cell_id": "plot"},
    ):
        response = await server.post("/resolve/api/artifacts", body)
        assert response.status_code == 403, (body, response.text)
    assert store_files(jp_root_dir) == []
    for body in (
        {"bundle": {"text/plain": "a value"}, "label": "Out[1]"},
        {"session_id": "s-own", "path": "result.txt"},
    ):
        response = await server.post("/resolve/api/artifacts", body)
        assert response.status_code == 201, (body, response.text)


@pytest.mark.parametrize("authorizer", [ContentsReadOnly])
async def test_promoting_an_output_leaves_the_notebook_when_contents_are_read_only(
    server: Server, jp_root_dir: Path
) -> None:
    path = make_notebook(jp_root_dir)
    before = path.read_bytes()
    response = await server.post(
        "/resolve/api/artifacts",
        {"notebook": "analysis.ipynb", "cell_id": "plot", "output_index": 0},
    )
    assert response.status_code == 201, response.text
    assert path.read_bytes() == before  # the id is recorded only for who may write the notebook


async def test_the_kernel_token_is_not_judged_by_the_servers_authorizer(
    server: Server, jp_serverapp: Any
) -> None:
    """The kernel token reaches only the server's own kernels, whose code runs as the server's
    user anyway; the Authorizer (here: deny all) judges people (see KernelTokenAuthorizer)."""
    headers = {"Authorization": f"token {jp_serverapp.web_app.settings['resolve_kernel_token']}"}
    async with server.client() as client:
        health = await client.get("/resolve/api/health", headers=headers)
        assert health.status_code == 200, health.text
        assert (await client.get("/api/contents", headers=headers)).status_code == 403
        value = base64.b64encode(b"x").decode()
        promoted = await client.post(
            "/resolve/api/artifacts", json={"bundle": {"image/png": value}}, headers=headers
        )
        assert promoted.status_code == 201, promoted.text
