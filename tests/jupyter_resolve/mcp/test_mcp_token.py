"""Issue 31.6: an MCP-scoped token, narrower than the Jupyter token. Made with `jupyter resolve
mcp-token` or `/resolve/api/mcp-tokens`, kept only as a digest; accepted on `/resolve/mcp` and
nowhere else; under it `ask` runs without `contents` write or `kernels` execute and a proposal
waits for a person: the token can never decide it. A revoked token is refused."""

from __future__ import annotations

import asyncio
import json
import re
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx

from tests.conftest import Server
from tests.jupyter_resolve.notebook.live import user_notebook
from tests.jupyter_resolve.notebook.test_proposals import waiting_proposal
from tests.scripting import script

from .test_mcp_server import connect

CELL = {"cell_type": "code", "source": "print('from an MCP client')"}


async def make_token(server: Server, name: str = "claude code") -> dict[str, Any]:
    made = await server.post("/resolve/api/mcp-tokens", {"name": name})
    assert made.status_code == 201, made.text
    body: dict[str, Any] = made.json()
    return body


async def as_token(server: Server, token: str, method: str, path: str, **kw: Any) -> httpx.Response:
    async with server.client() as client:
        headers = {"Authorization": f"Bearer {token}"}
        return await client.request(method, path, headers=headers, **kw)


async def test_a_token_is_stored_as_a_digest_and_listed_without_it(
    server: Server, jp_root_dir: Path
) -> None:
    made = await make_token(server)
    assert made["token"].startswith("resolve-mcp-") and made["name"] == "claude code"
    stored = jp_root_dir / ".resolve" / "mcp-tokens.json"
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    assert made["token"] not in stored.read_text()
    listed = (await server.get("/resolve/api/mcp-tokens")).json()["tokens"]
    assert listed == [{"id": made["id"], "name": "claude code", "created": made["created"]}]


async def test_the_token_is_refused_everywhere_but_the_mcp_endpoint(server: Server) -> None:
    token = (await make_token(server))["token"]
    for method, path in (
        ("GET", "/api/contents"),
        ("GET", "/api/kernels"),
        ("GET", "/resolve/api/runs"),
        ("GET", "/resolve/api/mcp-tokens"),
        ("POST", "/resolve/api/chat"),
    ):
        refused = await as_token(
            server, token, method, path, content=b"{}" if method == "POST" else None
        )
        assert refused.status_code == 403, (path, refused.status_code)


async def test_a_proposal_made_with_the_token_waits_for_a_person_and_the_token_cannot_decide_it(
    server: Server, gateway: Any, jp_serverapp: Any, jp_root_dir: Path
) -> None:
    path, _ = await user_notebook(server, jp_serverapp, jp_root_dir)
    token = (await make_token(server))["token"]
    async with connect(server, token) as client:
        proposing = asyncio.create_task(
            client.call_tool("notebook_propose", {"notebook": path, "cells": [CELL]})
        )
        run_id, proposal_id = await waiting_proposal(gateway)
        decide = f"/resolve/api/runs/{run_id}/proposals/{proposal_id}"
        body = json.dumps({"decision": "accept", "run": True}).encode()
        refused = await as_token(server, token, "POST", decide, content=body)
        assert refused.status_code == 403
        assert not proposing.done() and proposal_id in gateway.runs.get(run_id).proposals
        # a person decides
        person = await server.post(decide, {"decision": "reject"})
        assert person.status_code == 200, person.text
        answer = await proposing
    assert answer.is_error is False and answer.structured_content["accepted"] is False


async def test_ask_with_the_token_runs_without_write_or_kernel_rights(
    server: Server, gateway: Any, tmp_path: Path
) -> None:
    script(gateway, tmp_path, {"content": "fine"})
    token = (await make_token(server))["token"]
    async with connect(server, token) as client:
        asked = await client.call_tool("ask", {"prompt": "hello"})
    assert asked.is_error is False
    run = gateway.runs.get(asked.structured_content["run_id"])
    started = run.events[0].data
    assert started["permissions"] == {
        "contents_read": True,
        "contents_write": False,
        "kernels_execute": False,
    }


async def test_a_revoked_token_is_refused(server: Server) -> None:
    made = await make_token(server)
    async with connect(server, made["token"]) as client:
        assert "ask" in {t.name for t in (await client.list_tools()).tools}
    async with server.client() as http:
        revoked = await http.delete(f"/resolve/api/mcp-tokens/{made['id']}", headers=server.auth)
    assert revoked.status_code == 204
    assert (await server.get("/resolve/api/mcp-tokens")).json()["tokens"] == []
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
    body = json.dumps(initialize).encode()
    refused = await as_token(server, made["token"], "POST", "/resolve/mcp", content=body)
    assert refused.status_code in (401, 403)


async def test_the_cli_makes_lists_and_revokes_tokens_the_server_takes(
    server: Server, jp_root_dir: Path
) -> None:
    def cli(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "jupyter_resolve.cli", "mcp-token", *args],
            cwd=jp_root_dir,  # run in the server root, as the README says
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    made = await asyncio.to_thread(cli, "create", "cursor")
    found = re.match(r"(mcp-[0-9a-f]+) \(cursor\): (resolve-mcp-\S+)", made)
    assert found, made
    token_id, token = found.groups()
    listed = await asyncio.to_thread(cli, "list")
    assert token_id in listed and token not in listed
    assert token not in (jp_root_dir / ".resolve" / "mcp-tokens.json").read_text()
    async with connect(server, token) as client:
        assert "notebook_propose" in {t.name for t in (await client.list_tools()).tools}
    await asyncio.to_thread(cli, "revoke", token_id)
    assert token_id not in await asyncio.to_thread(cli, "list")
    initialize = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})
    refused = await as_token(server, token, "POST", "/resolve/mcp", content=initialize.encode())
    assert refused.status_code == 403


async def test_tokens_are_bounded_and_a_bad_id_is_a_400(server: Server, tmp_path: Path) -> None:
    from jupyter_resolve.mcp.tokens import MAX_TOKENS, TokenStore

    store = TokenStore(tmp_path)
    for n in range(MAX_TOKENS):
        store.create(f"client {n}")
    try:
        store.create("one too many")
    except Exception as exc:  # Conflict: revoke one first
        assert getattr(exc, "code", "") == "too_many_tokens"
    else:
        raise AssertionError("the store took more than MAX_TOKENS tokens")
    assert len(store.tokens()) == MAX_TOKENS
    async with server.client() as http:
        bad = await http.delete("/resolve/api/mcp-tokens/..%2F..", headers=server.auth)
    assert bad.status_code == 400, bad.text
