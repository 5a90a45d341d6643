"""The agent uses server-everything over streamable HTTP: a real server process on a loopback
port, its header secret taken from the environment (DESIGN 9.3)."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Server
from tests.launcher import free_port

from .servers import EVERYTHING, installed
from .test_mcp_client import ask

HEADER_SECRET = "canary-mcp-header-51d0"


@pytest.fixture
def everything_http() -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen(
        [installed(EVERYTHING), "streamableHttp"],
        env={"PATH": os.environ["PATH"], "PORT": str(port), "HOME": os.environ.get("HOME", "/")},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        while True:  # until it listens (pytest's timeout bounds the wait)
            assert process.poll() is None, "server-everything exited"
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture
def resolve_config(everything_http: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    monkeypatch.setenv("RESOLVE_MCP_HEADER", HEADER_SECRET)
    return {
        "mcp_servers": {
            "web": {"url": everything_http, "headers_env": {"X-Api-Key": "RESOLVE_MCP_HEADER"}}
        }
    }


async def test_everything_over_streamable_http(
    server: Server, gateway: Any, tmp_path: Path
) -> None:
    stream = await ask(server, gateway, tmp_path, "mcp.web.get-sum", a=2, b=40)
    assert [a["state"] for a in stream.of("tool.approval")] == ["waiting", "approved"]
    done = stream.of("tool.completed")[0]
    assert done["ok"] is True and "42" in done["output"]
    image = await ask(server, gateway, tmp_path, "mcp.web.get-tiny-image")
    assert image.of("tool.completed")[0]["mime"]["image/png"].startswith("iVBOR")
    web = (await server.get("/resolve/api/health")).json()["mcp"]["web"]
    assert web["transport"] == "http" and web["state"] == "ready"
    # the header's secret left the server's environment (kernels inherit it) and shows nowhere
    assert "RESOLVE_MCP_HEADER" not in os.environ
    assert HEADER_SECRET not in (await server.get("/resolve/api/health")).text
