"""Unauthenticated and malformed requests get 4xx JSON; the server stays up."""

from __future__ import annotations

import logging
from typing import Any

import httpx
import pytest

from tests.conftest import Server

PUBLIC = [
    ("POST", "/resolve/api/chat"),
    ("GET", "/resolve/api/runs"),
    ("GET", "/resolve/api/runs/run-x/events"),
    ("POST", "/resolve/api/runs/run-x/cancel"),
    ("GET", "/resolve/api/health"),
    ("GET", "/resolve/api/tools"),
    ("GET", "/resolve/api/souls"),
    ("POST", "/resolve/api/tasks"),
    ("GET", "/resolve/api/tasks/task-x/events"),
    ("POST", "/resolve/api/tasks/task-x/cancel"),
    ("POST", "/resolve/api/runs/run-x/approvals/call-1"),
    ("POST", "/resolve/v1/chat/completions"),
]


@pytest.mark.parametrize(("method", "path"), PUBLIC)
async def test_public_endpoints_need_jupyter_auth(server: Server, method: str, path: str) -> None:
    async with server.client() as client:
        response = await client.request(method, path, content=b"{}")
        assert response.status_code == 403
        response = await client.request(
            method, path, content=b"{}", headers={"Authorization": "token wrong"}
        )
        assert response.status_code == 403
    assert (await server.get("/resolve/api/health")).status_code == 200


BAD_CHAT = [
    (b"", "body"),
    (b"{not json", "body"),
    (b"[]", "body"),
    (b"{}", "messages"),
    (b'{"messages": []}', "messages"),
    (b'{"messages": "hi"}', "messages"),
    (b'{"messages": [{"role": "wizard", "content": "x"}]}', "messages.0.role"),
    (b'{"messages": [{"role": "user", "content": 5}]}', "messages.0.content"),
    (b'{"messages": [{"role": "user", "content": "x"}], "colour": 1}', "colour"),
    (b'{"messages": [{"role": "user", "content": "x"}], "session_id": "../etc"}', "session_id"),
    (b'{"messages": [{"role": "assistant", "content": "x"}]}', "messages"),
]


@pytest.mark.parametrize(("body", "field"), BAD_CHAT)
async def test_bad_chat_bodies_are_400_naming_the_field(
    server: Server, body: bytes, field: str
) -> None:
    response = await server.post("/resolve/api/chat", body)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "bad_request"
    assert error["message"].startswith(field), error


async def test_unknown_run_is_404_json(server: Server) -> None:
    for response in (
        await server.get("/resolve/api/runs/run-nope/events"),
        await server.post("/resolve/api/runs/run-nope/cancel", {}),
    ):
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "not_found"
    bad = await server.get("/resolve/api/runs/run-nope/events", headers={"Last-Event-ID": "x"})
    assert bad.status_code in (400, 404)


async def _internal(gateway: Any) -> str:
    await gateway.start()
    return f"http://127.0.0.1:{gateway.internal_port}/resolve/internal"


INTERNAL = ["/v1/chat/completions", "/tools"]


@pytest.mark.parametrize("path", INTERNAL)
async def test_internal_endpoints_need_the_runtime_token(
    server: Server, gateway: Any, path: str
) -> None:
    base = await _internal(gateway)
    async with httpx.AsyncClient(trust_env=False) as client:
        for headers in (
            {},
            {"Authorization": f"token {server.token}"},  # a Jupyter token is not enough
            {"Authorization": "Bearer wrong"},
        ):
            response = await client.post(base + path, content=b"{}", headers=headers)
            assert response.status_code == 401
            assert "launch token" in response.json()["error"]["message"]
        assert server.token not in response.text
        assert gateway.runtime_token not in response.text


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"nope",
        b"[]",
        b'{"messages": 3}',
        b'{"run_id": "r"}',
        b'{"run_id": "r", "call_id": "c", "name": "x", "arguments": "not an object"}',
    ],
)
async def test_internal_endpoints_reject_malformed_bodies(
    gateway: Any, body: bytes, server: Server
) -> None:
    base = await _internal(gateway)
    headers = {"Authorization": f"Bearer {gateway.runtime_token}"}
    async with httpx.AsyncClient(trust_env=False) as client:
        for path in INTERNAL:
            response = await client.post(base + path, content=body, headers=headers)
            assert response.status_code == 400, (path, body, response.text)
            assert "error" in response.json()
    assert (await server.get("/resolve/api/health")).json()["ok"] is True


async def test_tool_call_for_unknown_run_is_an_error_result(gateway: Any, server: Server) -> None:
    base = await _internal(gateway)
    headers = {"Authorization": f"Bearer {gateway.runtime_token}"}
    body = {"run_id": "run-ghost", "call_id": "c1", "name": "python", "arguments": {}}
    async with httpx.AsyncClient(trust_env=False) as client:
        response = await client.post(base + "/tools", json=body, headers=headers)
    assert response.status_code == 200
    assert response.json()["ok"] is False
    assert "run-ghost" in response.json()["output"]


# Ids (issue 14 item 8, DESIGN 9.4): [A-Za-z0-9][A-Za-z0-9._-]{0,127} everywhere, else a 400.
BAD_IDS = [".", "..", ".hidden", "-x", "a/b", "a b", "x" * 129, "ünï", "a\n"]


@pytest.mark.parametrize("bad", BAD_IDS)
async def test_bad_session_ids_in_bodies_are_400(
    server: Server, jp_root_dir: Any, bad: str
) -> None:
    for path, body in (
        ("/resolve/api/chat", {"messages": [{"role": "user", "content": "x"}]}),
        ("/resolve/api/tasks", {"goal": "x"}),
        ("/resolve/api/artifacts", {"path": "a.txt"}),
    ):
        response = await server.post(path, {**body, "session_id": bad})
        assert response.status_code == 400, (path, bad, response.text)
        assert response.json()["error"]["message"].startswith("session_id"), response.text
    # Nothing was made of it: the scratch kernel of "." or ".." had .resolve/ as its cwd.
    sessions = jp_root_dir / ".resolve" / "sessions"
    assert not sessions.exists() or list(sessions.iterdir()) == []


@pytest.mark.parametrize(
    "path",
    [
        "/resolve/api/runs/{}/events",
        "/resolve/api/runs/{}/cancel",
        "/resolve/api/runs/{}/approvals/call-1",
        "/resolve/api/tasks/{}/events",
        "/resolve/api/tasks/{}/cancel",
        "/resolve/api/artifacts/{}",
        "/resolve/api/artifacts/{}/content",
    ],
)
async def test_bad_ids_in_routes_are_400_naming_them(server: Server, path: str) -> None:
    from urllib.parse import quote

    method = "GET" if path.endswith(("events", "{}", "content")) else "POST"
    async with server.client() as client:
        for bad in (".x", "%2E%2E", "x" * 129, "a b", "-lead"):
            url = path.format(bad if bad.startswith("%") else quote(bad, safe=""))
            body = b'{"decision": "approve"}' if "approvals" in path else b"{}"
            response = await client.request(
                method, url, content=body if method == "POST" else None, headers=server.auth
            )
            assert response.status_code == 400, (url, response.text)
            assert response.json()["error"]["code"] == "bad_id", response.text


async def test_bad_ids_in_query_arguments_are_400(server: Server) -> None:
    for path, params, field in (
        ("/resolve/api/runs", {"session_id": ".."}, "session_id"),
        ("/resolve/api/runs", {"session_id": "a b"}, "session_id"),
        ("/resolve/api/runs", {"status": "sleeping"}, "status"),
        ("/resolve/api/runs", {"before": "not-a-cursor"}, "before"),
        ("/resolve/api/runs", {"limit": "0"}, "limit"),
        ("/resolve/api/runs", {"limit": "201"}, "limit"),
        ("/resolve/api/sessions", {"before": "!!"}, "before"),
        ("/resolve/api/sessions", {"limit": "x"}, "limit"),
        ("/resolve/api/artifacts", {"run": "../x"}, "run"),
        ("/resolve/api/artifacts", {"media_type": "text/html\r\nX-Evil: 1"}, "media_type"),
    ):
        response = await server.get(path, params=params)
        assert response.status_code == 400, (path, params, response.text)
        assert response.json()["error"]["message"].startswith(field), response.text
    ok = await server.get("/resolve/api/runs", params={"session_id": "s-1.a_b", "status": ""})
    assert ok.status_code == 200 and ok.json()["runs"] == [] and ok.json()["next"] is None


async def test_a_good_id_of_128_characters_is_a_session(server: Server, jp_root_dir: Any) -> None:
    session = "S" + "a1._-" * 25 + "xy"
    assert len(session) == 128
    (jp_root_dir / "notes.txt").write_text("n")
    # an attachment makes the session's folders at run start (else its kernel's start does)
    stream = await server.chat("hi", session_id=session, attachments=["notes.txt"])
    assert stream.status == 200 and stream.of("run.completed")
    assert (jp_root_dir / ".resolve" / "sessions" / session / "work").is_dir()


# Deep JSON (issue 14 item 11): refused before parsing, on every JSON endpoint.
JSON_ENDPOINTS = [
    "/resolve/api/chat",
    "/resolve/api/tasks",
    "/resolve/api/artifacts",
    "/resolve/v1/chat/completions",
    "/resolve/api/runs/run-x/approvals/call-1",
]


@pytest.mark.parametrize("path", JSON_ENDPOINTS)
async def test_deeply_nested_json_is_400_on_every_json_endpoint(server: Server, path: str) -> None:
    async with server.client() as client:
        for body in (
            b"[" * 100_000 + b"]" * 100_000,
            b'{"messages": ' + b'{"a": ' * 5000 + b"1" + b"}" * 5000 + b"}",
            b'{"goal": "x", "chain": ' + b"[" * 65 + b"]" * 65 + b"}",
        ):
            response = await client.post(path, content=body, headers=server.auth)
            assert response.status_code == 400, (path, body[:40], response.text)
            assert "nested deeper than 64" in response.json()["error"]["message"]
    assert (await server.get("/resolve/api/health")).status_code == 200


async def test_the_internal_listener_logs_answered_calls_at_debug_and_refusals_as_warnings(
    gateway: Any, server: Server
) -> None:
    base = await _internal(gateway)
    records: list[logging.LogRecord] = []
    handler = logging.Handler(logging.DEBUG)
    handler.emit = records.append  # type: ignore[method-assign]
    access = logging.getLogger("tornado.access")  # jupyter_server reparents it to its own log
    level = access.level
    access.addHandler(handler)
    access.setLevel(logging.DEBUG)
    headers = {"Authorization": f"Bearer {gateway.runtime_token}"}
    body = {"run_id": "run-ghost", "call_id": "c1", "name": "python", "arguments": {}}
    try:
        async with httpx.AsyncClient(trust_env=False) as client:
            await client.post(base + "/tools", json=body, headers=headers)
            await client.post(base + "/tools", json=body)  # no launch token
    finally:
        access.removeHandler(handler)
        access.setLevel(level)
    lines = [(r.levelno, r.getMessage().rsplit(" ", 1)[0]) for r in records]
    assert (logging.DEBUG, "200 POST /resolve/internal/tools") in lines
    assert [lvl for lvl, message in lines if message.startswith("401 ")] == [logging.WARNING]
