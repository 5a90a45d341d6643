"""Shared fixtures: a real Jupyter server (pytest-jupyter) with the extension and a real
agent-httpd, and an SSE reader over real loopback HTTP."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

# re-exported: the tests import them from here; the launcher owns them (the bench imports it)
from tests.launcher import REPO as REPO
from tests.launcher import runtime_binary as runtime_binary

pytest_plugins = ["pytest_jupyter.jupyter_server"]


@pytest.fixture
def resolve_config() -> dict[str, Any]:
    """Override in a test module (or parametrize) to set ``c.Resolve`` for the server."""
    return {}


@pytest.fixture
def jp_server_config(resolve_config: dict[str, Any]) -> dict[str, Any]:
    return {
        "ServerApp": {"jpserver_extensions": {"jupyter_resolve": True}},
        "Resolve": {
            "runtime_path": runtime_binary(),
            "runtime_health_interval": 0.5,
            # the server runs in the test process: gc.freeze would keep every test's garbage
            "freeze_startup_objects": False,
            **resolve_config,
        },
    }


@dataclass
class SSE:
    id: int | None
    event: str
    data: dict[str, Any]


@dataclass
class Stream:
    status: int
    headers: httpx.Headers
    events: list[SSE] = field(default_factory=list)
    comments: int = 0
    body: bytes = b""

    def types(self) -> list[str]:
        return [e.event for e in self.events]

    def text(self) -> str:
        return "".join(e.data["text"] for e in self.events if e.event == "text.delta")

    def of(self, event: str) -> list[dict[str, Any]]:
        return [e.data for e in self.events if e.event == event]


def parse_sse_block(block: str) -> SSE | None:
    fields: dict[str, str] = {}
    for line in block.split("\n"):
        if line.startswith(":") or not line:
            continue
        name, _, value = line.partition(":")
        fields[name] = value[1:] if value.startswith(" ") else value
    if "data" not in fields:
        return None
    return SSE(
        id=int(fields["id"]) if "id" in fields else None,
        event=fields.get("event", "message"),
        data=json.loads(fields["data"]),
    )


class Server:
    """The running test server seen from a client: base URL, token, and request helpers."""

    def __init__(self, base: str, token: str) -> None:
        self.base = base
        self.token = token
        self.auth = {"Authorization": f"token {token}"}
        # One client for many concurrent streams (creating one per request costs an SSL
        # context each, which alone can block the loop for seconds at 200 streams).
        self.shared: httpx.AsyncClient | None = None

    def client(self, **kw: Any) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=self.base, timeout=60, trust_env=False, **kw)

    async def stream(
        self,
        path: str,
        body: Any = None,
        *,
        method: str = "POST",
        headers: dict[str, str] | None = None,
        until: Callable[[SSE], bool] | None = None,
    ) -> Stream:
        """Read an SSE response to its end (or until ``until`` says stop)."""
        if self.shared is not None:
            return await self._stream(self.shared, path, body, method, headers, until)
        async with self.client() as client:
            return await self._stream(client, path, body, method, headers, until)

    async def _stream(
        self,
        client: httpx.AsyncClient,
        path: str,
        body: Any,
        method: str,
        headers: dict[str, str] | None,
        until: Callable[[SSE], bool] | None,
    ) -> Stream:
        content = json.dumps(body).encode() if body is not None else None
        async with client.stream(
            method, path, content=content, headers={**self.auth, **(headers or {})}
        ) as response:
            result = Stream(response.status_code, response.headers)
            buffer = ""
            async for text in response.aiter_text():
                buffer += text
                while "\n\n" in buffer:
                    block, buffer = buffer.split("\n\n", 1)
                    if block.startswith(":"):
                        result.comments += 1
                        continue
                    event = parse_sse_block(block)
                    if event is None:
                        continue
                    result.events.append(event)
                    if until is not None and until(event):
                        return result
            result.body = buffer.encode()
            return result

    async def chat(
        self, content: str = "hi", until: Callable[[SSE], bool] | None = None, **extra: Any
    ) -> Stream:
        body = {"messages": [{"role": "user", "content": content}], **extra}
        return await self.stream("/resolve/api/chat", body, until=until)

    async def get(self, path: str, **kw: Any) -> httpx.Response:
        async with self.client() as client:
            return await client.get(path, headers={**self.auth, **kw.pop("headers", {})}, **kw)

    async def post(self, path: str, body: Any = None, **kw: Any) -> httpx.Response:
        async with self.client() as client:
            content = body if isinstance(body, bytes) else json.dumps(body).encode()
            headers = {**self.auth, **kw.pop("headers", {})}
            return await client.post(path, content=content, headers=headers, **kw)


@pytest.fixture
def server(jp_serverapp: Any, http_server: Any, jp_http_port: int, jp_base_url: str) -> Server:
    token = jp_serverapp.identity_provider.token
    return Server(f"http://127.0.0.1:{jp_http_port}{jp_base_url.rstrip('/')}", token)


@pytest.fixture
def gateway(jp_serverapp: Any) -> Any:
    return jp_serverapp.web_app.settings["resolve"]
