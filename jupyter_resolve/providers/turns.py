"""The turns the offline scripted model plays (a script's lines or the demo's answers), the
pieces both :mod:`.scripted` and :mod:`.demo` build them from."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

OFFLINE = "(offline scripted model)"
QUOTE_LIMIT = 1000


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: str  # JSON text


@dataclass(frozen=True)
class Turn:
    """One model turn of a script or of the demo."""

    content: str = ""
    reasoning: str = ""
    tool_calls: tuple[ToolCall, ...] = field(default_factory=tuple)
    soul: str | None = None


def tool_names(body: dict[str, Any]) -> set[str]:
    names: set[str] = set()
    for tool in body.get("tools") or []:
        if isinstance(tool, dict):
            function = tool.get("function")
            name = function.get("name") if isinstance(function, dict) else tool.get("name")
            if isinstance(name, str):
                names.add(name)
    return names
