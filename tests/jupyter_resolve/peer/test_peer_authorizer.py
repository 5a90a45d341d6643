"""The peer routes and the server's Authorizer (DESIGN 9.4): a Jupyter login on the A2A
endpoint is judged by the Authorizer (resource ``resolve``: read for GetTask, execute to send or
cancel); a signed peer is judged by its signature and its granted tools, not by a Jupyter
Authorizer that knows nothing of it."""

from __future__ import annotations

from typing import Any

import pytest
from jupyter_server.auth.authorizer import Authorizer

from tests.conftest import Server
from tests.jupyter_resolve.peer.peerclient import PEERS, rpc
from tests.jupyter_resolve.test_authorization import DenyAll, ReadOnly

MESSAGE = {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}


def body(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


@pytest.fixture
def authorizer() -> type[Authorizer]:
    return DenyAll


@pytest.fixture
def resolve_config() -> dict[str, Any]:
    return {"peer_secrets": PEERS}


@pytest.fixture
def jp_server_config(jp_server_config: dict[str, Any], authorizer: type) -> dict[str, Any]:
    server_app = {**jp_server_config["ServerApp"], "authorizer_class": authorizer}
    return {**jp_server_config, "ServerApp": server_app}


async def test_deny_all_refuses_a_jupyter_login_but_not_a_signed_peer(
    server: Server, gateway: Any
) -> None:
    async with server.client() as client:
        for payload in (
            body("SendMessage", {"message": MESSAGE}),
            body("GetTask", {"id": "run-x"}),
            {"not": "json-rpc"},
        ):
            refused = await client.post("/resolve/peer/a2a", json=payload, headers=server.auth)
            assert refused.status_code == 403, refused.text
    assert gateway.runs.runs == {}
    signed = await rpc(server, "SendMessage", {"message": MESSAGE})
    assert signed["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_with_peers_off_the_card_needs_read(server: Server, gateway: Any) -> None:
    gateway.config.peer_secrets = {}
    assert (await server.get("/resolve/.well-known/agent-card.json")).status_code == 403


@pytest.mark.parametrize("authorizer", [ReadOnly])
async def test_read_only_gets_tasks_but_sends_and_cancels_nothing(
    server: Server, gateway: Any
) -> None:
    task = (await rpc(server, "SendMessage", {"message": MESSAGE}))["result"]["task"]
    runs = len(gateway.runs.runs)
    async with server.client() as client:
        got = await client.post(
            "/resolve/peer/a2a", json=body("GetTask", {"id": "run-x"}), headers=server.auth
        )
        assert got.status_code == 200 and got.json()["error"]["code"] == -32001
        for payload in (
            body("SendMessage", {"message": MESSAGE}),
            body("CancelTask", {"id": task["id"]}),
        ):
            refused = await client.post("/resolve/peer/a2a", json=payload, headers=server.auth)
            assert refused.status_code == 403, refused.text
    assert len(gateway.runs.runs) == runs
    # with peers off, a reader still sees the card
    gateway.config.peer_secrets = {}
    assert (await server.get("/resolve/.well-known/agent-card.json")).status_code == 200
