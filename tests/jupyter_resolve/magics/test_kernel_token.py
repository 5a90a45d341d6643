"""The connection the server gives its kernels: JUPYTER_RESOLVE_URL and a token scoped to
/resolve/api/* (accepted there, refused by the rest of Jupyter, never given to scratch kernels),
in the kernels' environment, never in the server's os.environ."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from jupyter_resolve.magics.client import TOKEN_ENV, URL_ENV
from jupyter_resolve.scratch.kernels import kernel_environment
from jupyter_resolve.scratch.workspace import Workspace
from tests.conftest import Server


def same_url(exported: str, expected: str) -> bool:
    """pytest-jupyter serves on ``localhost``; the fixture's client uses 127.0.0.1."""
    return exported.replace("//localhost:", "//127.0.0.1:") == expected


def kernel_token(jp_serverapp: Any) -> str:
    token: str = jp_serverapp.web_app.settings["resolve_kernel_token"]
    return token


def kernel_headers(token: str, scheme: str = "token") -> dict[str, str]:
    return {"Authorization": f"{scheme} {token}"}


async def test_the_token_is_the_servers_own_and_not_in_the_process_environment(
    server: Server, jp_serverapp: Any
) -> None:
    assert kernel_token(jp_serverapp) and kernel_token(jp_serverapp) != server.token
    assert URL_ENV not in os.environ and TOKEN_ENV not in os.environ


async def test_kernel_token_is_accepted_under_resolve_api(
    server: Server, jp_serverapp: Any
) -> None:
    token = kernel_token(jp_serverapp)
    async with server.client() as client:
        for scheme in ("token", "Bearer"):
            health = await client.get("/resolve/api/health", headers=kernel_headers(token, scheme))
            assert health.status_code == 200, health.text
        # A POST needs no XSRF token: a header token is never sent by a browser on its own.
        chat = await client.post(
            "/resolve/api/chat",
            content=b'{"messages":[{"role":"user","content":"hi"}]}',
            headers=kernel_headers(token),
        )
        assert chat.status_code == 200
        assert "event: run.completed" in chat.text


async def test_kernel_token_is_refused_by_the_rest_of_jupyter(
    server: Server, jp_serverapp: Any
) -> None:
    token = kernel_token(jp_serverapp)
    async with server.client() as client:
        for path in ("/api/kernels", "/api/contents", "/api/sessions"):
            response = await client.get(path, headers=kernel_headers(token))
            assert response.status_code == 403, path
        response = await client.post(
            "/resolve/v1/chat/completions",
            content=b'{"model":"x","messages":[{"role":"user","content":"hi"}]}',
            headers=kernel_headers(token),
        )
        assert response.status_code == 403
        wrong = await client.get("/resolve/api/health", headers={"Authorization": "token nope"})
        assert wrong.status_code == 403
        # The server's own token keeps working everywhere.
        assert (await client.get("/api/kernels", headers=server.auth)).status_code == 200


async def test_kernels_the_server_starts_inherit_the_connection(
    server: Server, jp_serverapp: Any
) -> None:
    manager = jp_serverapp.kernel_manager
    kernel_id = await manager.start_kernel()
    try:
        process = manager.get_kernel(kernel_id).provisioner.process
        raw = await asyncio.to_thread(Path(f"/proc/{process.pid}/environ").read_bytes)
        env = dict(item.split("=", 1) for item in raw.decode().split("\0") if "=" in item)
        assert same_url(env[URL_ENV], server.base + "/")
        assert env[TOKEN_ENV] == kernel_token(jp_serverapp)
        assert env["HOME"] == os.environ["HOME"]  # the server's environment, plus the two
    finally:
        await manager.shutdown_kernel(kernel_id, now=True)


def test_scratch_kernels_never_get_the_token(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv(URL_ENV, "http://127.0.0.1:1/")
    monkeypatch.setenv(TOKEN_ENV, "secret")
    env = kernel_environment(Workspace(tmp_path))
    assert URL_ENV not in env and TOKEN_ENV not in env
    assert "secret" not in env.values()
