"""The bench's floor extension answers as a chat would, on a real Jupyter server.

The floor figures are only a floor if the no-op pays what a chat pays in Jupyter: the same
authentication and authorization (``execute`` on ``resolve``), and an event stream that is
flushed before it ends. Its bare twin must answer the same with no Jupyter in the way.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from jupyter_server.auth.authorizer import Authorizer

from bench.floor_extension import FIRST, LAST
from tests.conftest import Server


class NoExecute(Authorizer):
    def is_authorized(self, handler: Any, user: Any, action: str, resource: str) -> bool:
        return action != "execute"


@pytest.fixture
def authorizer() -> type[Authorizer] | None:
    return None


@pytest.fixture
def jp_server_config(authorizer: type[Authorizer] | None) -> dict[str, Any]:
    server_app: dict[str, Any] = {"jpserver_extensions": {"bench.floor_extension": True}}
    if authorizer is not None:
        server_app["authorizer_class"] = authorizer
    return {"ServerApp": server_app}


async def test_the_noop_streams_one_event_then_the_end(server: Server) -> None:
    async with server.client() as client:
        response = await client.post("/resolve-bench/floor", headers=server.auth, json={})
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream"
    assert response.content == FIRST + LAST


async def test_the_bare_twin_answers_the_same_without_jupyter(server: Server) -> None:
    async with server.client() as client:
        port = (await client.get("/resolve-bench/floor", headers=server.auth)).json()["bare_port"]
        async with httpx.AsyncClient(trust_env=False) as bare:
            response = await bare.post(f"http://127.0.0.1:{port}/floor", json={})
    assert response.status_code == 200
    assert response.content == FIRST + LAST


async def test_the_noop_needs_the_token(server: Server) -> None:
    async with server.client() as client:
        response = await client.post("/resolve-bench/floor", json={})
        port_answer = await client.get("/resolve-bench/floor")  # no XSRF check on a GET
    assert response.status_code == 403
    assert port_answer.status_code == 403
    assert "bare_port" not in port_answer.text


@pytest.mark.parametrize("authorizer", [NoExecute])
async def test_the_noop_asks_the_authorizer_as_a_chat_does(server: Server) -> None:
    async with server.client() as client:
        response = await client.post("/resolve-bench/floor", headers=server.auth, json={})
        port_answer = await client.get("/resolve-bench/floor", headers=server.auth)
    assert response.status_code == 403
    assert port_answer.status_code == 200  # read is allowed
