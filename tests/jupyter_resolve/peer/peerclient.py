"""A peer's side of the tests: signed requests (v2, made for the URL they are sent to), the
invoke and JSON-RPC calls, polling a job, and deciding a job's pending approval."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import httpx

from jupyter_resolve.peer.signing import signed_headers
from tests.conftest import Server

SECRET = "alpha-shared-secret-0123456789"
PEERS = {"alpha": SECRET, "beta": "beta-shared-secret-9876543210"}
READ_TOOLS = ["read_file", "list_dir", "search_files", "notebook_read"]


async def signed_post(
    server: Server,
    path: str,
    body: Any,
    *,
    peer: str = "alpha",
    secret: str | None = None,
    now: float | None = None,
    nonce: str | None = None,
    extra: dict[str, str] | None = None,
    sign_for: str | None = None,
    method: str = "POST",
    raw: bytes | None = None,
) -> httpx.Response:
    """POST ``body`` signed as ``peer``, with no Jupyter token and no XSRF cookie; signed for
    ``sign_for`` (a path) and ``method`` when given, else for what is sent."""
    content = raw if raw is not None else json.dumps(body).encode()
    headers = signed_headers(
        peer,
        secret or PEERS.get(peer, "x"),
        content,
        url=server.base + (sign_for or path),
        method=method,
        now=now,
        nonce=nonce,
    )
    async with server.client() as client:
        return await client.post(path, content=content, headers={**headers, **(extra or {})})


async def invoke(server: Server, tool: str, arguments: Any = None, **kw: Any) -> httpx.Response:
    body = {"tool": tool, "arguments": arguments or {}}
    return await signed_post(server, "/resolve/peer/invoke", body, **kw)


async def rpc(server: Server, method: str, params: Any, **kw: Any) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    response = await signed_post(server, "/resolve/peer/a2a", body, **kw)
    assert response.status_code == 200, response.text
    reply: dict[str, Any] = response.json()
    return reply


async def poll_status(server: Server, job_id: str, peer: str = "alpha") -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while True:
        status: dict[str, Any] = (
            await invoke(server, "exec.status", {"job_id": job_id}, peer=peer)
        ).json()
        if status.get("state") != "running" or time.monotonic() > deadline:
            return status
        await asyncio.sleep(0.1)


async def decide_pending(server: Server, gateway: Any, run_id: str, decision: str = "deny") -> None:
    """Wait for the run's tool call to wait on a person, then decide it as that person."""
    run = gateway.runs.get(run_id)
    deadline = time.monotonic() + 60
    while not run.approvals and not run.completed and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert run.approvals, f"run {run_id} never waited for an approval"
    call_id = next(iter(run.approvals))
    answer = await server.post(
        f"/resolve/api/runs/{run_id}/approvals/{call_id}", {"decision": decision}
    )
    assert answer.status_code == 200, answer.text
