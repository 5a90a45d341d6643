from __future__ import annotations

from typing import Any

import pytest

from kernel_tools import schemas
from kernel_tools.registry import KERNEL_EXECUTED, REGISTRY, implemented_names

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "s": {"type": "string", "minLength": 1},
        "i": {"type": "integer", "minimum": 1, "maximum": 10},
        "n": {"type": "number"},
        "b": {"type": "boolean"},
        "e": {"type": "string", "enum": ["x", "y"]},
    },
    "required": ["s"],
}


REQUIRED = {"name", "description", "parameters", "effect", "approval", "runs_in", "needs", "peer"}
FACTS = {
    *("needs", "needs_unsandboxed", "peer"),
    *("file_tool", "always_ask", "notebook_folder", "loads_mentions"),
}
PERMISSIONS = {"contents_read", "contents_write", "kernels_execute"}


def test_tool_list() -> None:
    names = schemas.tool_names()
    assert names == [
        "python",
        "shell",
        "read_file",
        "write_file",
        "edit_file",
        "list_dir",
        "search_files",
        "notebook_read",
        "web_fetch",
        "subagents.delegate",
        "artifacts.promote",
        "notebook_variables",
        "inspect_variable",
        "snapshot_variable",
        "notebook_propose",
    ]
    for tool in schemas.load_tools():
        assert REQUIRED <= set(tool) <= REQUIRED | FACTS, tool["name"]
        assert tool["effect"] in {"read", "write", "exec", "network"}
        assert tool["runs_in"] in {"kernel", "gateway"}
        assert set(tool["needs"]) | set(tool.get("needs_unsandboxed", ())) <= PERMISSIONS
        assert tool["peer"] in {"yes", "sandboxed"}
        flags = FACTS & set(tool) - {"needs", "needs_unsandboxed", "peer"}
        assert all(tool[fact] is True for fact in flags)
        assert tool["approval"] in {"auto", "ask", "deny"}
        assert tool["parameters"]["type"] == "object"
        assert len(tool["description"]) > 80
    assert schemas.get_tool("web_fetch") == {**schemas.load_tools()[8]}
    assert schemas.get_tool("nope") is None


def test_registry_matches_the_kernel_schemas() -> None:
    assert implemented_names() == frozenset(schemas.kernel_tool_names())
    assert KERNEL_EXECUTED == {"python"}
    assert "python" not in REGISTRY and "web_fetch" not in REGISTRY


def test_valid() -> None:
    assert schemas.validate(SCHEMA, {"s": "a", "i": 3, "n": 1.5, "b": False, "e": "y"}) == []
    assert schemas.validate(SCHEMA, {"s": "a", "n": 2}) == []


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ([], "arguments must be of type object, not array"),
        ({}, "'s' is required"),
        ({"s": 1}, "'s' must be of type string, not integer"),
        ({"s": ""}, "'s' must be at least 1 character(s) long"),
        ({"s": "a", "i": True}, "'i' must be of type integer, not boolean"),
        ({"s": "a", "i": 1.5}, "'i' must be of type integer, not number"),
        ({"s": "a", "i": 0}, "'i' must be at least 1"),
        ({"s": "a", "i": 11}, "'i' must be at most 10"),
        ({"s": "a", "n": "1"}, "'n' must be of type number, not string"),
        ({"s": "a", "b": 1}, "'b' must be of type boolean, not integer"),
        ({"s": "a", "e": "z"}, '\'e\' must be one of "x", "y"'),
        ({"s": "a", "zz": 1}, "unknown property 'zz' (known: s, i, n, b, e)"),
        ({"s": None}, "'s' must be of type string, not null"),
    ],
)
def test_invalid(value: Any, message: str) -> None:
    assert message in schemas.validate(SCHEMA, value)


def test_every_problem_is_reported() -> None:
    problems = schemas.validate(SCHEMA, {"i": 0, "x": 1})
    assert len(problems) == 3
