"""Unauthenticated and malformed requests get 4xx JSON; the server stays up."""

from __future__ import annotations

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
