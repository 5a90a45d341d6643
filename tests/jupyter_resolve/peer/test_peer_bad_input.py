"""Issue 14 item 11 (the peer part): over-long or path-like task, job and peer ids, deeply
nested JSON and oversized bodies get a clear 4xx or JSON-RPC error, never a 500, and nothing
runs."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.conftest import Server
from tests.jupyter_resolve.peer.peerclient import PEERS, invoke, rpc, signed_post

BAD_IDS = ["j" * 300, "../sessions/x/work/log", ".hidden", "a/b", "job\n", "x" * 129]


@pytest.fixture
def resolve_config() -> dict[str, Any]:
    return {"peer_secrets": PEERS}


def nested(depth: int) -> bytes:
    return b'{"tool": "exec.status", "arguments": {"job_id": ' + b"[" * depth + b"]" * depth + b"}}"


@pytest.mark.parametrize("bad", BAD_IDS)
async def test_a2a_task_ids_are_checked(server: Server, gateway: Any, bad: str) -> None:
    for method in ("GetTask", "CancelTask", "tasks/get"):
        reply = await rpc(server, method, {"id": bad})
        assert reply["error"]["code"] == -32602, reply
        assert "[A-Za-z0-9]" in reply["error"]["message"]
    named = await rpc(server, "GetTask", {"name": f"tasks/{bad}"})
    assert named["error"]["code"] == -32602


@pytest.mark.parametrize("bad", BAD_IDS)
async def test_job_ids_are_checked(server: Server, bad: str) -> None:
    response = await invoke(server, "exec.status", {"job_id": bad})
    assert response.status_code == 400, response.text
    assert response.json()["ok"] is False and "job_id" in response.json()["error"]


async def test_a_malformed_peer_id_is_refused_with_a_reason(server: Server) -> None:
    for bad in ("p" * 300, "../alpha", "alpha beta"):
        response = await invoke(server, "resolve.tools", extra={"X-Resolve-Peer": bad})
        assert response.status_code == 401
        assert "X-Resolve-Peer must match" in response.json()["error"]


@pytest.mark.parametrize("depth", [100, 100_000])
async def test_deeply_nested_json_is_a_400(server: Server, gateway: Any, depth: int) -> None:
    raw = nested(depth)
    invoked = await signed_post(server, "/resolve/peer/invoke", None, raw=raw)
    assert invoked.status_code == 400, invoked.text
    assert "nested deeper" in invoked.text
    body = (
        b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": '
        + b"[" * depth
        + b"]" * depth
        + b"}}"
    )
    signed = await signed_post(server, "/resolve/peer/a2a", None, raw=body)
    assert signed.status_code == 400, signed.text
    assert signed.json()["error"]["code"] == -32700
    assert "nested deeper" in signed.json()["error"]["message"]
    async with server.client() as client:
        with_token = await client.post("/resolve/peer/a2a", content=body, headers=server.auth)
    assert with_token.status_code == 400 and with_token.json()["error"]["code"] == -32700
    assert gateway.runs.runs == {}


async def test_an_oversized_body_is_a_413(server: Server) -> None:
    raw = json.dumps({"tool": "resolve.tools", "pad": "x" * (1024 * 1024)}).encode()
    response = await signed_post(server, "/resolve/peer/invoke", None, raw=raw)
    assert response.status_code == 413
