"""Connections to the configured MCP servers, one per server and kept across runs.

A server starts on first need (the gateway's start lists its tools; a call to a server that is
down starts it again), through the official ``mcp`` SDK, which is imported only then. Each
connection lives in a task of its own that holds the SDK client open (its cancel scopes must be
left by the task that entered them: the life cycle of ``supervised.py``); calls are made from
the runs' tasks. A server that fails to start, dies, or does not answer a call within the tool
timeout is stopped and marked failed, with the reason and the tail of its stderr for
``/resolve/api/health``; the next call starts it again. Its last tool listing stays, so the
agent can still call it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from contextlib import AsyncExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._version import __version__
from ..contracts.mcp_servers import HttpServer, ServerSpec, StdioServer, redact
from ..supervised import SessionUnavailable, Supervised, missing_sdk, reason

if TYPE_CHECKING:
    from mcp import Client

MAX_PAGES = 20
# Exact SDK code for "the connection closed under the call" (mcp_types.CONNECTION_CLOSED).
CONNECTION_CLOSED = -32000


class McpUnavailable(SessionUnavailable):
    """The server could not be reached: not started, died, or hung (a sentence to show)."""

    code = "mcp_unavailable"


class McpConnection(Supervised["Client"]):
    """One configured server: its state, its last tool listing, its stderr."""

    KIND, TASK = "MCP server", "mcp"  # states: idle | starting | ready | failed | stopped
    UNAVAILABLE = McpUnavailable

    def __init__(
        self,
        name: str,
        spec: ServerSpec,
        *,
        stderr_path: Path,
        secret_of: Callable[[str], str | None],
        start_timeout: float,
        log: logging.Logger,
    ) -> None:
        super().__init__(name, stderr_path=stderr_path, start_timeout=start_timeout, log=log)
        self.spec = spec
        self.secret_of = secret_of
        self.tools: list[dict[str, Any]] | None = None  # the last listing, wire JSON
        self.listings = 0  # how many times the tools were listed (a catalogue key)

    def headers(self) -> dict[str, str]:
        if not isinstance(self.spec, HttpServer):
            return {}
        values = {h: self.secret_of(env) for h, env in self.spec.headers_env.items()}
        missing = [self.spec.headers_env[h] for h, v in values.items() if v is None]
        if missing:
            raise McpUnavailable(f"the environment has no {', '.join(missing)} (headers_env)")
        return {h: v for h, v in values.items() if v is not None}

    def secrets(self) -> list[str]:
        found = list(self.spec.env.values()) if isinstance(self.spec, StdioServer) else []
        if isinstance(self.spec, HttpServer):
            found += [v for v in map(self.secret_of, self.spec.headers_env.values()) if v]
        return found

    def withhold(self, text: str) -> str:
        return redact(text, self.secrets())

    def _check(self) -> None:
        try:
            import mcp  # noqa: F401  (the SDK, imported on first need)
        except ImportError:
            raise McpUnavailable(missing_sdk("mcp", "mcp", "mcp_servers")) from None

    async def _open(self, stack: AsyncExitStack) -> Client:
        """The client, connected, its tools listed."""
        from mcp import Client, Implementation

        transport = await self._transport(stack)
        info = Implementation(name="jupyter-resolve", version=__version__)
        client = await stack.enter_async_context(Client(transport, client_info=info))
        self.tools = await list_tools(client)
        self.listings += 1
        return client

    async def _transport(self, stack: AsyncExitStack) -> Any:
        if isinstance(self.spec, StdioServer):
            from mcp import StdioServerParameters
            from mcp.client.stdio import stdio_client

            command = self.spec.command
            # The SDK passes the server only HOME, PATH, USER and the like, plus `env`.
            params = StdioServerParameters(command=command[0], args=command[1:], env=self.spec.env)
            return stdio_client(params, errlog=self.open_stderr(stack))
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        http = await stack.enter_async_context(
            httpx2.AsyncClient(headers=self.headers(), timeout=httpx2.Timeout(30.0, read=300.0))
        )
        return streamable_http_client(self.spec.url, http_client=http)

    async def call(self, tool: str, arguments: dict[str, Any], timeout: float) -> dict[str, Any]:
        """The wire JSON of ``tools/call``; McpUnavailable when the server is not there or did
        not answer in ``timeout`` seconds (it is then stopped, to start afresh next time)."""
        from mcp import MCPError

        client = await self.ensure()
        try:
            result = await asyncio.wait_for(client.call_tool(tool, arguments), timeout)
        except asyncio.TimeoutError:
            why = f"no answer to '{tool}' within the tool timeout ({timeout:g} s)"
        except MCPError as exc:
            if exc.code != CONNECTION_CLOSED:  # the server answered with an error: it lives
                return {"content": [{"type": "text", "text": exc.message}], "isError": True}
            why = f"the connection closed during '{tool}' (the server died?)"
        except Exception as exc:
            why = f"'{tool}' failed: {reason(exc)}"
        else:
            dumped = result.model_dump(by_alias=True, exclude_none=True, mode="json")
            return dict(dumped)
        async with self._lock:
            await self._shutdown()
        raise McpUnavailable(self.fail(f"{why}; stopped, it starts again on the next call"))

    def describe(self) -> dict[str, Any]:
        return {
            **self.spec.describe(),
            "state": self.state,
            "tools": None if self.tools is None else [t["name"] for t in self.tools],
            "starts": self.starts,
            "error": self.error,
            "stderr_tail": self.stderr_tail() if isinstance(self.spec, StdioServer) else "",
        }


async def list_tools(client: Client) -> list[dict[str, Any]]:
    """Every tool the server lists (following cursors, a bounded number of pages)."""
    tools: list[dict[str, Any]] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools += [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in page.tools]
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


def connections(
    specs: Mapping[str, ServerSpec],
    *,
    state_dir: Path,
    secret_of: Callable[[str], str | None],
    start_timeout: float,
    log: logging.Logger,
) -> dict[str, McpConnection]:
    return {
        name: McpConnection(
            name,
            spec,
            stderr_path=state_dir / "mcp" / f"{name}.stderr.log",
            secret_of=secret_of,
            start_timeout=start_timeout,
            log=log,
        )
        for name, spec in specs.items()
    }
