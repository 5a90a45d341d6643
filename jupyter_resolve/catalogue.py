"""The tools of one server (DESIGN 3.4, 9.3): the builtins' schemas, the dispatcher's
implementations, the MCP servers' tools, the allow list and what the souls declare, and the drift
between them. Every run start and tool call reads :meth:`Catalogue.toolset`, made again only
when what it is made of changed (``tools/toolset.py``)."""

from __future__ import annotations

from typing import Any

from .config import Resolve
from .contracts.bodies import ToolCallRequest, ToolResult
from .contracts.drift import compute_drift, mcp_drift, soul_drift, without_mcp
from .mcp.catalog import McpTools
from .souls import Soul
from .tools.catalog import ToolSchema, default_allow
from .tools.dispatch import ToolDispatcher
from .tools.toolset import ToolSet


class Catalogue:
    """What a run may be offered, and whether the four lists agree."""

    def __init__(
        self,
        config: Resolve,
        schemas: list[ToolSchema],
        tools: ToolDispatcher,
        mcp: McpTools,
        souls: dict[str, Soul],
    ) -> None:
        self.config = config
        self.schemas = schemas
        self.tools = tools
        self.mcp = mcp
        self.souls = souls
        self._toolset: ToolSet | None = None
        self._toolset_key: tuple[Any, ...] = ()

    def allowed_tools(self) -> list[str]:
        configured = self.config.allowed_tools
        # by default every tool of every configured MCP server too (their approval is ask)
        if configured is not None:
            return list(configured)
        return [*default_allow(self.schemas), *self.mcp.names()]

    def toolset(self) -> ToolSet:
        """The catalogue as of now, made again only when what it is made of changed."""
        configured = self.config.allowed_tools
        key = (
            None if configured is None else tuple(configured),
            self.mcp.generation(),
            tuple(self.tools.names),
            tuple(self.souls),
        )
        if self._toolset is None or key != self._toolset_key:
            self._toolset = ToolSet(
                [*self.schemas, *self.mcp.schemas()], self.allowed_tools(), self._drift
            )
            self._toolset_key = key
        return self._toolset

    def schema(self, name: str) -> ToolSchema | None:
        return self.toolset().schema(name)

    def tool_specs(self) -> list[dict[str, Any]]:
        """The bridge tools given to the runtime: what the agent can see."""
        return list(self.toolset().specs)

    def tool_lists(self) -> dict[str, list[str]]:
        """The four lists of DESIGN 3.4, as this server has them, and the fifth: the tools the
        MCP servers offer (DESIGN 9.3)."""
        return self._tool_lists(self.tool_specs())

    def drift(self) -> list[str]:
        return list(self.toolset().drift)

    def register_mcp_tools(self) -> None:
        """The dispatcher runs exactly the MCP tools the servers list (once they started)."""
        listed = set(self.mcp.names())
        for name in set(self.tools.names) - set(without_mcp(self.tools.names)) - listed:
            self.tools.unregister(name)
        for name in listed:
            self.tools.register(name, self._call_mcp)

    async def _call_mcp(self, request: ToolCallRequest) -> ToolResult:
        return await self.mcp.call(request, self.config.tool_timeout)

    def _tool_lists(self, specs: list[dict[str, Any]]) -> dict[str, list[str]]:
        return {
            "schemas": [s.name for s in self.schemas],
            "allow": without_mcp(self.allowed_tools()),
            "bridge": without_mcp(t["function"]["name"] for t in specs),
            "implementations": without_mcp(self.tools.names),
            "mcp": self.mcp.names(),
        }

    def _drift(self, specs: list[dict[str, Any]]) -> list[str]:
        souls = {name: soul.declared_tools() for name, soul in self.souls.items()}
        allowed = self.allowed_tools()
        builtin_souls = {name: without_mcp(tools) for name, tools in souls.items()}
        return (
            compute_drift(self._tool_lists(specs))
            + soul_drift(builtin_souls, without_mcp(allowed))
            + mcp_drift(allowed, souls, self.mcp.names(), self.mcp.unlisted())
        )
