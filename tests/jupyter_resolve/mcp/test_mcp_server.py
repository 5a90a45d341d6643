"""`<base_url>resolve/mcp` driven by real MCP clients (DESIGN 9.3): the official `mcp` Python
client and the MCP Inspector's CLI, each with the Jupyter token and refused without it."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.conftest import Server
from tests.scripting import call, script

from .servers import INSPECTOR, installed


def connect(server: Server, token: str | None) -> Client:
    headers = {"Authorization": f"token {token}"} if token else {}
    http = httpx2.AsyncClient(headers=headers, timeout=60)
    return Client(streamable_http_client(f"{server.base}/resolve/mcp", http_client=http))


async def test_python_client_lists_asks_with_progress_and_reads_the_run(
    server: Server, gateway: Any, tmp_path: Path, jp_root_dir: Path
) -> None:
    script(
        gateway,
        tmp_path,
        call("list_dir", path="."),
        {"content": "The answer is 42."},
    )
    progress: list[tuple[float, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, message))

    async with connect(server, server.token) as client:
        assert client.server_info is not None and client.server_info.name == "jupyter-resolve"
        names = {t.name for t in (await client.list_tools()).tools}
        assert {"ask", "runs_list", "run_events", "artifacts_list", "artifact_get"} <= names
        assert {"artifacts_verify", "notebook_read", "souls_list"} <= names
        answer = await client.call_tool(
            "ask", {"prompt": "what is 6*7?"}, progress_callback=on_progress
        )
        assert answer.is_error is False
        assert answer.content[0].text == "The answer is 42."  # type: ignore[union-attr]
        structured = answer.structured_content or {}
        run_id = structured["run_id"]
        assert structured["reason"] == "stop" and run_id.startswith("run")
        messages = [m for _, m in progress]
        assert messages[0] == f"run {run_id} started" and "calling list_dir" in messages
        assert [v for v, _ in progress] == sorted(v for v, _ in progress)  # it only grows
        log = await client.read_resource(f"resolve://runs/{run_id}")
        events = [json.loads(line) for line in log.contents[0].text.splitlines()]  # type: ignore[union-attr]
        assert events[0]["type"] == "run.started" and events[-1]["type"] == "run.completed"
        listed = [r.uri for r in (await client.list_resources()).resources]
        assert f"resolve://runs/{run_id}" in listed
        runs = await client.call_tool("runs_list", {})
        assert run_id in runs.content[0].text  # type: ignore[union-attr]
        souls = await client.call_tool("souls_list", {})
        assert "planner" in souls.content[0].text  # type: ignore[union-attr]
        (jp_root_dir / "n.ipynb").write_text(
            json.dumps(
                {
                    "cells": [{"cell_type": "markdown", "metadata": {}, "source": "# Notes"}],
                    "metadata": {},
                    "nbformat": 4,
                    "nbformat_minor": 5,
                }
            )
        )
        notebook = await client.call_tool("notebook_read", {"path": "n.ipynb"})
        assert "# Notes" in notebook.content[0].text  # type: ignore[union-attr]
        outside = await client.call_tool("notebook_read", {"path": "../x.ipynb"})
        assert outside.is_error is True
        bad = await client.call_tool("run_events", {"run_id": "../etc"})
        assert bad.is_error is True


async def test_python_client_is_refused_without_a_token(server: Server) -> None:
    with pytest.raises(Exception) as refused:  # an MCPError in an exception group
        async with connect(server, None) as client:
            await client.list_tools()
    assert "MCPError" in repr(refused.value) and "error response" in repr(refused.value)
    response = await server.client().post(
        "/resolve/mcp", content=b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
    )
    assert response.status_code == 403


async def test_protocol_errors_are_clear(server: Server) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    no_session = await server.post("/resolve/mcp", body)
    assert no_session.status_code == 400 and "Mcp-Session-Id" in no_session.text
    unknown = await server.post("/resolve/mcp", body, headers={"Mcp-Session-Id": "nope"})
    assert unknown.status_code == 404
    assert (await server.post("/resolve/mcp", b"[1, 2]")).status_code == 400
    assert (await server.post("/resolve/mcp", b"{not json")).status_code == 400
    assert (await server.get("/resolve/mcp")).status_code == 405


def inspector(server: Server, *args: str, token: str | None) -> subprocess.CompletedProcess[str]:
    headers = ["--header", f"Authorization: token {token}"] if token else []
    return subprocess.run(
        [
            installed(INSPECTOR),
            "--cli",
            f"{server.base}/resolve/mcp",
            "--transport",
            "http",
            *headers,
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=90,
    )


async def test_inspector_cli_lists_and_asks_with_a_token_and_is_refused_without(
    server: Server, gateway: Any, tmp_path: Path
) -> None:
    script(gateway, tmp_path, {"content": "Hello from the workbench."})
    listed = await asyncio.to_thread(
        inspector, server, "--method", "tools/list", token=server.token
    )
    assert listed.returncode == 0, listed.stderr
    assert "ask" in [t["name"] for t in json.loads(listed.stdout)["tools"]]
    asked = await asyncio.to_thread(
        inspector,
        server,
        "--method",
        "tools/call",
        "--tool-name",
        "ask",
        "--tool-arg",
        "prompt=say hello",
        token=server.token,
    )
    assert asked.returncode == 0, asked.stderr
    answer = json.loads(asked.stdout)
    assert answer["content"][0]["text"] == "Hello from the workbench."
    assert answer["structuredContent"]["run_id"].startswith("run")
    refused = await asyncio.to_thread(inspector, server, "--method", "tools/list", token=None)
    assert refused.returncode != 0 and '"tools"' not in refused.stdout
