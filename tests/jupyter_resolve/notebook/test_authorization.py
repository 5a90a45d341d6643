"""The user's notebook and kernel need ``kernels`` execute and ``contents`` read besides
``resolve`` (DESIGN 9.4): a person without them is refused before anything reaches a kernel."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from jupyter_server.auth.authorizer import Authorizer

from tests.conftest import Server
from tests.jupyter_resolve.notebook.live import make_notebook


class NoKernels(Authorizer):
    """Everything on resolve and the server's files, nothing on kernels."""

    def is_authorized(self, handler: Any, user: Any, action: str, resource: str) -> bool:
        return resource != "kernels"


class NoContents(Authorizer):
    def is_authorized(self, handler: Any, user: Any, action: str, resource: str) -> bool:
        return resource != "contents"


@pytest.fixture
def authorizer() -> type[Authorizer]:
    return NoKernels


@pytest.fixture
def jp_server_config(jp_server_config: dict[str, Any], authorizer: type) -> dict[str, Any]:
    server_app = {**jp_server_config["ServerApp"], "authorizer_class": authorizer}
    return {**jp_server_config, "ServerApp": server_app}


async def refused(server: Server, jp_root_dir: Path) -> None:
    path = make_notebook(jp_root_dir)
    variables = await server.get("/resolve/api/notebook/variables", params={"path": path})
    assert variables.status_code == 403
    decision = await server.post("/resolve/api/runs/run-1/proposals/p-1", {"decision": "accept"})
    assert decision.status_code == 403  # refused before the run is even looked up
    chat = {
        "messages": [{"role": "user", "content": "hi"}],
        "notebook": path,
        "mentions": [{"name": "df"}],
    }
    assert (await server.post("/resolve/api/chat", chat)).status_code == 403


async def test_a_user_without_kernels_permission_is_refused(
    server: Server, jp_root_dir: Path
) -> None:
    await refused(server, jp_root_dir)
    # a mention that comes described (from %resolve) needs no kernel of the server
    script_free = {
        "messages": [{"role": "user", "content": "hi"}],
        "mentions": [{"name": "df", "description": "given"}],
    }
    streamed = await server.stream("/resolve/api/chat", script_free)
    assert streamed.status == 200
    assert streamed.events[0].data["mentions"] == [{"name": "df", "description": "given"}]


@pytest.mark.parametrize("authorizer", [NoContents])
async def test_a_user_without_contents_permission_is_refused(
    server: Server, jp_root_dir: Path
) -> None:
    await refused(server, jp_root_dir)
