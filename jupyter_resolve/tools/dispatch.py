"""Dispatch of a runtime tool call (DESIGN 3.3): check the name, then execute.

An unknown or disallowed name is a clear error result to the model, never an execution.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from ..contracts.bodies import ToolCallRequest, ToolResult

MAX_OUTPUT_CHARS = 20_000

Implementation = Callable[[ToolCallRequest], Awaitable[ToolResult]]
Host = TypeVar("Host")


def bind(
    host: Host, tool: Callable[[Host, ToolCallRequest], Awaitable[ToolResult]]
) -> Implementation:
    """``tool`` as an implementation: called with the services it needs (``host``)."""

    async def call(request: ToolCallRequest) -> ToolResult:
        return await tool(host, request)

    return call


def cut_output(text: str, limit: int = MAX_OUTPUT_CHARS) -> tuple[str, bool]:
    """Cut ``text`` to ``limit`` characters with a marker saying so."""
    if len(text) <= limit:
        return text, False
    return f"{text[:limit]}\n[output truncated: {limit} of {len(text)} characters shown]", True


def refusal(name: str, allowed: Sequence[str]) -> ToolResult:
    listing = ", ".join(sorted(allowed)) if allowed else "none"
    return ToolResult(
        ok=False,
        output=f"unknown tool '{name}': not among the tools this run may use ({listing})",
    )


class ToolDispatcher:
    """Maps tool names to implementations; the run decides which names it may call."""

    def __init__(self) -> None:
        self._implementations: dict[str, Implementation] = {}

    def register(self, name: str, implementation: Implementation) -> None:
        self._implementations[name] = implementation

    def implementation(self, name: str) -> Implementation | None:
        return self._implementations.get(name)

    def unregister(self, name: str) -> None:
        self._implementations.pop(name, None)

    @property
    def names(self) -> list[str]:
        return sorted(self._implementations)

    async def call(self, request: ToolCallRequest, allowed: Sequence[str]) -> ToolResult:
        implementation = self._implementations.get(request.name)
        if request.name not in allowed or implementation is None:
            return refusal(request.name, [n for n in allowed if n in self._implementations])
        result = await implementation(request)
        output, cut = cut_output(result.output)
        return result.model_copy(update={"output": output, "truncated": result.truncated or cut})
