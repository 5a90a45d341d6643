"""The peer endpoints stay reachable without a login on a server that refuses unauthenticated
access everywhere else (``ServerApp.allow_unauthenticated_access = False``)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from jupyter_resolve.peer.signing import signed_headers
from tests.conftest import Server

SECRET = "gamma-shared-secret-0123456789"


@pytest.fixture
def jp_server_config(jp_server_config: dict[str, Any]) -> dict[str, Any]:
    config = {key: dict(value) for key, value in jp_server_config.items()}
    config["ServerApp"]["allow_unauthenticated_access"] = False
    config["Resolve"]["peer_secrets"] = {"gamma": SECRET}
    return config


async def test_signed_peer_needs_no_login(server: Server, jp_serverapp: Any) -> None:
    assert jp_serverapp.web_app.settings["allow_unauthenticated_access"] is False
    raw = json.dumps({"tool": "resolve.skills", "arguments": {}}).encode()
    async with server.client() as client:
        card = await client.get("/resolve/.well-known/agent-card.json")
        assert card.status_code == 200
        invoked = await client.post(
            "/resolve/peer/invoke",
            content=raw,
            headers=signed_headers("gamma", SECRET, raw, url=server.base + "/resolve/peer/invoke"),
        )
        assert invoked.status_code == 200 and invoked.json()["ok"] is True
        # the rest of the API still wants a login
        assert (await client.get("/resolve/api/runs")).status_code == 403
