"""The tool catalogue computed once: what a run start reads must equal what it would compute."""

from __future__ import annotations

import json
from typing import Any

from jupyter_resolve.contracts.context import estimate
from jupyter_resolve.contracts.discipline import tool_discipline
from jupyter_resolve.contracts.run_manifest import tool_entry
from jupyter_resolve.tools.catalog import ToolSchema, bridge_tools, load_schemas
from jupyter_resolve.tools.toolset import ToolSet


def schema(name: str) -> ToolSchema:
    return ToolSchema(
        name=name,
        description=f"the {name} tool",
        parameters={"type": "object", "properties": {"x": {"type": "string"}}},
        effect="read",
    )


def test_precomputed_parts_equal_computing_them_per_run() -> None:
    schemas = load_schemas()
    allowed = [s.name for s in schemas][::2]
    seen: list[list[dict[str, Any]]] = []
    toolset = ToolSet(schemas, allowed, lambda specs: seen.append(specs) or ["drifted"])
    assert toolset.specs == bridge_tools(schemas, allowed)
    assert seen == [toolset.specs] and toolset.drift == ["drifted"]
    names = [t["function"]["name"] for t in toolset.specs][1:]
    tools = toolset.select(names)
    assert [t["function"]["name"] for t in tools] == names
    assert toolset.tools_chars(names) == len(json.dumps(tools))
    assert toolset.tools_chars([]) == 0
    assert [toolset.manifest_entries[n] for n in names] == [tool_entry(t) for t in tools]
    assert toolset.discipline(names) == tool_discipline(names)
    assert toolset.discipline(names) is toolset.discipline(names)  # kept, not made again
    assert estimate("s", [], "m", tools) == estimate("s", [], "m") + int(
        toolset.tools_chars(names) / 4
    )


def test_select_keeps_catalogue_order_and_only_allowed_tools() -> None:
    toolset = ToolSet([schema("b"), schema("a"), schema("c")], ["a", "b"], lambda _: [])
    assert [t["function"]["name"] for t in toolset.select(["a", "c", "b"])] == ["b", "a"]
    assert toolset.schema("c") is not None and toolset.schema("zzz") is None
