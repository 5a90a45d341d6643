"""The configured MCP servers' tools as the gateway sees them: schemas for the bridge, the calls,
and the servers' health (DESIGN 9.3)."""

from __future__ import annotations

import asyncio
import logging
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..config import Resolve
from ..contracts.bodies import ToolCallRequest, ToolResult
from ..contracts.mcp_servers import effect_of, parse_servers, redact, split_name, tool_name
from ..tools.catalog import ToolSchema
from .connections import McpConnection, McpUnavailable, connections
from .results import map_result

DESCRIPTION_LIMIT = 2_000


def tool_schema(server: str, tool: Mapping[str, Any]) -> ToolSchema:
    """An MCP tool (its listing's wire JSON) as a bridge schema: ``mcp.<server>.<tool>``,
    the effect from its annotations, approval ``ask``."""
    description = str(tool.get("description") or tool.get("title") or tool["name"])
    parameters = tool.get("inputSchema")
    return ToolSchema(
        name=tool_name(server, str(tool["name"])),
        description=f"[MCP server '{server}'] {description[:DESCRIPTION_LIMIT]}",
        parameters=parameters if isinstance(parameters, dict) else {"type": "object"},
        effect=effect_of(tool.get("annotations")),
        approval="ask",
        runs_in="mcp",
    )


class McpTools:
    """Every configured server (``c.Resolve.mcp_servers``), started on first need."""

    def __init__(
        self,
        raw: Mapping[str, Any],
        *,
        state_dir: Path,
        secret_of: Callable[[str], str | None],
        start_timeout: float,
        log: logging.Logger,
    ) -> None:
        self.servers: dict[str, McpConnection] = connections(
            parse_servers(raw),
            state_dir=state_dir,
            secret_of=secret_of,
            start_timeout=start_timeout,
            log=log,
        )
        self.retry_after = start_timeout
        self._lock = asyncio.Lock()
        for connection in self.servers.values():
            connection.secrets()  # header secrets leave the environment now, before any kernel

    async def discover(self) -> None:
        """Start the servers whose tools were never listed (at once; failures are kept for
        health, not raised). One that just failed is left until ``retry_after`` has passed, so
        that every chat does not wait for it; a call to it starts it at once."""
        async with self._lock:
            now = time.monotonic()
            waiting = [
                c
                for c in self.servers.values()
                if c.tools is None and now - c.failed_at >= self.retry_after
            ]
            if waiting:
                await asyncio.gather(*(self._try(c) for c in waiting))

    @staticmethod
    async def _try(connection: McpConnection) -> None:
        try:
            await connection.ensure()
        except McpUnavailable:
            pass  # recorded on the connection

    def schemas(self) -> list[ToolSchema]:
        return [
            tool_schema(name, tool)
            for name, connection in self.servers.items()
            for tool in connection.tools or []
        ]

    def names(self) -> list[str]:
        return [s.name for s in self.schemas()]

    def generation(self) -> tuple[tuple[str, int], ...]:
        """Changes whenever a server's tool listing does (the gateway's catalogue key)."""
        return tuple((name, c.listings) for name, c in self.servers.items())

    def unlisted(self) -> list[str]:
        """Configured servers whose tools are not known (never started successfully)."""
        return [name for name, c in self.servers.items() if c.tools is None]

    def secrets(self) -> list[str]:
        return [s for c in self.servers.values() for s in c.secrets()]

    async def call(self, request: ToolCallRequest, timeout: float) -> ToolResult:
        parts = split_name(request.name)
        connection = self.servers.get(parts[0]) if parts else None
        if parts is None or connection is None:
            return ToolResult(ok=False, output=f"{request.name}: no configured MCP server has it")
        try:
            raw = await connection.call(parts[1], request.arguments, timeout)
        except McpUnavailable as exc:
            detail = redact(str(exc), connection.secrets())
            return ToolResult(ok=False, output=f"{request.name}: MCP server '{parts[0]}' {detail}")
        return map_result(raw, connection.secrets())

    def describe(self) -> dict[str, Any]:
        return {name: c.describe() for name, c in self.servers.items()}

    async def stop(self) -> None:
        await asyncio.gather(*(c.stop() for c in self.servers.values()))


def offered_tools(config: Resolve, log: logging.Logger) -> tuple[list[str], list[str]]:
    """For ``jupyter resolve check``: start every configured server, list its tools, stop it.
    Returns the tool names and one line per server that did not start."""
    if not config.mcp_servers:
        return [], []

    async def listing() -> tuple[list[str], list[str]]:
        with tempfile.TemporaryDirectory(prefix="resolve-check-") as state_dir:
            tools = McpTools(
                config.mcp_servers,
                state_dir=Path(state_dir),
                secret_of=config.env_secret,
                start_timeout=config.mcp_start_timeout,
                log=log,
            )
            try:
                await tools.discover()
                problems = [
                    f"MCP server '{name}' did not start: {info['error']}"
                    + (f" (stderr: {info['stderr_tail'][-300:]})" if info["stderr_tail"] else "")
                    for name, info in tools.describe().items()
                    if info["tools"] is None
                ]
                return tools.names(), problems
            finally:
                await tools.stop()

    return asyncio.run(listing())
