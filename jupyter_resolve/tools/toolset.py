"""The tool catalogue as of now, computed once (pure): what every run start and tool call
would otherwise recompute — the bridge specs, the drift between the lists, each spec's digest
for the run manifest and its length for the token estimate, the discipline text per tool set.

The gateway keeps one :class:`ToolSet` and makes a new one when what it is computed from
changes (the allowed list, an MCP server's listing, the registered implementations).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from ..contracts.discipline import tool_discipline
from ..contracts.run_manifest import tool_entry
from .catalog import ToolSchema, bridge_tools, named, needs_table

MAX_DISCIPLINES = 256  # distinct tool sets whose discipline text is kept


class ToolSet:
    """One snapshot of the catalogue: treat everything it hands out as read-only."""

    def __init__(
        self,
        schemas: Sequence[ToolSchema],
        allowed: Sequence[str],
        drift: Callable[[list[dict[str, Any]]], list[str]],
    ) -> None:
        self.allowed = list(allowed)
        self.schemas = {s.name: s for s in schemas}
        # what each tool's caller must be allowed, with scratch kernels sandboxed or not
        self._needs = {True: needs_table(schemas, True), False: needs_table(schemas, False)}
        self.specs = bridge_tools(schemas, self.allowed)
        self.drift = drift(self.specs)
        # per spec: the manifest's entry and its JSON length (contracts.context.estimate)
        self.manifest_entries = {t["function"]["name"]: tool_entry(t) for t in self.specs}
        self.json_chars = {t["function"]["name"]: len(json.dumps(t)) for t in self.specs}
        self._disciplines: dict[tuple[str, ...], str] = {}

    def schema(self, name: str) -> ToolSchema | None:
        return self.schemas.get(name)

    def needs(self, sandboxed: bool = True) -> dict[str, tuple[str, ...]]:
        """Tool name → the permissions a run's caller needs for it (DESIGN 10.1)."""
        return self._needs[sandboxed]

    def having(self, fact: str, names: Sequence[str]) -> list[str]:
        """The ``names`` whose schema says ``fact`` (``file_tool``, ``notebook_folder``...)."""
        return named(self.schemas, names, fact)

    def select(self, names: Sequence[str]) -> list[dict[str, Any]]:
        """The specs of ``names`` that are allowed, in catalogue order."""
        wanted = set(names)
        return [t for t in self.specs if t["function"]["name"] in wanted]

    def tools_chars(self, names: Sequence[str]) -> int:
        """``len(json.dumps(tools))`` of the selected specs, without dumping them again."""
        if not names:
            return 0
        return 2 + sum(self.json_chars[n] for n in names) + 2 * (len(names) - 1)

    def discipline(self, names: Sequence[str]) -> str:
        key = tuple(names)
        text = self._disciplines.get(key)
        if text is None:
            if len(self._disciplines) >= MAX_DISCIPLINES:
                self._disciplines.clear()
            text = self._disciplines[key] = tool_discipline(names)
        return text
