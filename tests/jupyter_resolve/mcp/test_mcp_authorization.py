"""The server's Authorizer decides for `<base_url>resolve/mcp` as for the REST API (DESIGN
9.4): resolve read to speak MCP, execute for `ask`, contents read for `notebook_read`."""

from __future__ import annotations

from typing import Any

import pytest
from jupyter_server.auth.authorizer import Authorizer

from tests.conftest import Server

from .test_mcp_server import connect


class ReadOnly(Authorizer):
    def is_authorized(self, handler: Any, user: Any, action: str, resource: str) -> bool:
        return action == "read" and resource == "resolve"


class DenyAll(Authorizer):
    def is_authorized(self, handler: Any, user: Any, action: str, resource: str) -> bool:
        return False


@pytest.fixture
def authorizer() -> type[Authorizer]:
    return ReadOnly


@pytest.fixture
def jp_server_config(jp_server_config: dict[str, Any], authorizer: type) -> dict[str, Any]:
    server_app = {**jp_server_config["ServerApp"], "authorizer_class": authorizer}
    return {**jp_server_config, "ServerApp": server_app}


async def test_read_only_lists_but_cannot_ask_or_read_notebooks(
    server: Server, gateway: Any
) -> None:
    async with connect(server, server.token) as client:
        assert "ask" in {t.name for t in (await client.list_tools()).tools}
        asked = await client.call_tool("ask", {"prompt": "run something"})
        assert asked.is_error is True
        assert "not authorized to execute on resolve" in asked.content[0].text  # type: ignore[union-attr]
        notebook = await client.call_tool("notebook_read", {"path": "x.ipynb"})
        assert "not authorized to read contents" in notebook.content[0].text  # type: ignore[union-attr]
    assert gateway.runs.runs == {}


@pytest.mark.parametrize("authorizer", [DenyAll])
async def test_deny_all_refuses_the_endpoint(server: Server) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
    response = await server.post("/resolve/mcp", body)
    assert response.status_code == 403
