"""Connections to the configured MCP servers, one per server and kept across runs.

A server starts on first need (the gateway's start lists its tools; a call to a server that is
down starts it again), through the official ``mcp`` SDK, which is imported only then. Each
connection lives in a task of its own that holds the SDK client open (its cancel scopes must be
left by the task that entered them); calls are made from the runs' tasks. A server that fails to
start, dies, or does not answer a call within the tool timeout is stopped and marked failed,
with the reason and the tail of its stderr for ``/resolve/api/health``; the next call starts it
again. Its last tool listing stays, so the agent can still call it.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable, Mapping
from contextlib import AsyncExitStack
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from .._version import __version__
from ..contracts.mcp_servers import HttpServer, ServerSpec, StdioServer, redact

if TYPE_CHECKING:
    from mcp import Client

STDERR_TAIL = 2_000
MAX_PAGES = 20
# Exact SDK code for "the connection closed under the call" (mcp_types.CONNECTION_CLOSED).
CONNECTION_CLOSED = -32000


class McpUnavailable(Exception):
    """The server could not be reached: not started, died, or hung (a sentence to show)."""


def missing_sdk() -> McpUnavailable:
    return McpUnavailable(
        "the 'mcp' package is not installed: pip install 'jupyter-resolve[mcp]' to use "
        "c.Resolve.mcp_servers"
    )


def reason(exc: BaseException) -> str:
    """A one-line reason for ``exc``, the first leaf of an exception group."""
    while isinstance(getattr(exc, "exceptions", None), (list, tuple)) and exc.exceptions:  # type: ignore[attr-defined]
        exc = exc.exceptions[0]  # type: ignore[attr-defined]
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text[:300]}" if text else type(exc).__name__


class McpConnection:
    """One configured server: its state, its last tool listing, its stderr."""

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
        self.name = name
        self.spec = spec
        self.stderr_path = stderr_path
        self.secret_of = secret_of
        self.start_timeout = start_timeout
        self.log = log
        self.state = "idle"  # idle | starting | ready | failed | stopped
        self.error: str | None = None
        self.starts = 0
        self.failed_at = -1e9  # monotonic time of the last failure
        self.tools: list[dict[str, Any]] | None = None  # the last listing, wire JSON
        self.listings = 0  # how many times the tools were listed (a catalogue key)
        self._client: Client | None = None
        self._task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._lock = asyncio.Lock()
        self._stderr: IO[str] | None = None

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

    def stderr_tail(self) -> str:
        try:
            with self.stderr_path.open("rb") as handle:
                handle.seek(max(0, self.stderr_path.stat().st_size - STDERR_TAIL))
                text = handle.read().decode("utf-8", "replace")
        except OSError:
            return ""
        return redact(text, self.secrets()).strip()

    def fail(self, why: str) -> str:
        self.state, self.error = "failed", redact(why, self.secrets())
        self.failed_at = time.monotonic()
        self.log.warning("MCP server '%s': %s", self.name, self.error)
        return self.error

    async def ensure(self) -> Client:
        """The live client, starting the server if it is not running."""
        async with self._lock:
            client, task = self._client, self._task
            if client is not None and task is not None and not task.done():
                return client
            await self._shutdown()
            try:
                import mcp  # noqa: F401  (the SDK, imported on first need)
            except ImportError:
                raise missing_sdk() from None
            self.starts += 1
            self.state, self.error = "starting", None
            ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._stop = asyncio.Event()
            self._task = asyncio.create_task(self._serve(ready), name=f"mcp-{self.name}")
            try:
                await asyncio.wait_for(asyncio.shield(ready), self.start_timeout)
            except asyncio.TimeoutError:
                why = f"did not start within {self.start_timeout:g} s"
            except McpUnavailable as exc:
                why = str(exc)
            except Exception as exc:
                why = f"could not start: {reason(exc)}"
            else:
                self.state = "ready"
                assert self._client is not None
                return self._client
            await self._shutdown()
            raise McpUnavailable(self.fail(why))

    async def _serve(self, ready: asyncio.Future[None]) -> None:
        from mcp import Client, Implementation

        try:
            async with AsyncExitStack() as stack:
                transport = await self._transport(stack)
                info = Implementation(name="jupyter-resolve", version=__version__)
                client = await stack.enter_async_context(Client(transport, client_info=info))
                self.tools = await list_tools(client)
                self.listings += 1
                self._client = client
                ready.set_result(None)
                await self._stop.wait()
        except Exception as exc:
            if not ready.done():
                ready.set_exception(exc)
            elif self.state == "ready":
                self.fail(f"stopped: {reason(exc)}")
        finally:
            self._client = None

    async def _transport(self, stack: AsyncExitStack) -> Any:
        if isinstance(self.spec, StdioServer):
            from mcp import StdioServerParameters
            from mcp.client.stdio import stdio_client

            self.stderr_path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.stderr_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            self._stderr = stack.enter_context(open(fd, "w", encoding="utf-8"))
            command = self.spec.command
            # The SDK passes the server only HOME, PATH, USER and the like, plus `env`.
            params = StdioServerParameters(command=command[0], args=command[1:], env=self.spec.env)
            return stdio_client(params, errlog=self._stderr)
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

    async def _shutdown(self) -> None:
        task, self._task = self._task, None
        if task is None:
            return
        self._stop.set()
        try:
            await asyncio.wait_for(asyncio.shield(task), 10.0)
        except (asyncio.TimeoutError, Exception):
            task.cancel()
        self._client = None

    async def stop(self) -> None:
        async with self._lock:
            await self._shutdown()
            if self.state != "failed":
                self.state = "stopped" if self.starts else "idle"

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
