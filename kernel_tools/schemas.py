"""The builtin tool schemas (``builtin-tools.json``, list 1 of DESIGN 3.4) and a validator for
the JSON-schema subset they use: type (object, string, integer, number, boolean), properties,
required, enum, minimum, maximum, minLength. Unknown properties are always rejected."""

from __future__ import annotations

import json
import os
from functools import cache
from typing import Any

SCHEMA_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "builtin-tools.json")

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
}


@cache
def load_tools() -> tuple[dict[str, Any], ...]:
    """Every tool entry of ``builtin-tools.json``, in file order."""
    # Through this module's loader: the file on disk, or the copy shipped into a kernel that has
    # no kernel_tools of its own (jupyter_resolve/scratch/shipped_package.py).
    loader = __spec__.loader if __spec__ is not None else None
    if loader is not None and hasattr(loader, "get_data"):
        data = json.loads(loader.get_data(SCHEMA_FILE))
    else:
        with open(SCHEMA_FILE, encoding="utf-8") as handle:
            data = json.load(handle)
    return tuple(data["tools"])


def tool_names() -> list[str]:
    return [tool["name"] for tool in load_tools()]


def kernel_tool_names() -> list[str]:
    """Tools with ``runs_in: kernel`` (the ones kernel_tools must implement)."""
    return [tool["name"] for tool in load_tools() if tool["runs_in"] == "kernel"]


def get_tool(name: str) -> dict[str, Any] | None:
    for tool in load_tools():
        if tool["name"] == name:
            return tool
    return None


def _type_ok(expected: str, value: Any) -> bool:
    if isinstance(value, bool) and expected != "boolean":
        return False  # bool is an int in Python, never in JSON schema
    return isinstance(value, _TYPES[expected])


def validate(schema: dict[str, Any], value: Any, where: str = "arguments") -> list[str]:
    """Every way ``value`` breaks ``schema``, as sentences; empty when it is valid."""
    expected = schema.get("type")
    if expected is not None and not _type_ok(expected, value):
        return [f"{where} must be of type {expected}, not {_json_type(value)}"]
    problems: list[str] = []
    if "enum" in schema and value not in schema["enum"]:
        choices = ", ".join(json.dumps(choice) for choice in schema["enum"])
        problems.append(f"{where} must be one of {choices}")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            problems.append(f"{where} must be at least {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            problems.append(f"{where} must be at most {schema['maximum']}")
    if isinstance(value, str) and len(value) < schema.get("minLength", 0):
        problems.append(f"{where} must be at least {schema['minLength']} character(s) long")
    if isinstance(value, dict):
        properties: dict[str, Any] = schema.get("properties", {})
        for name in schema.get("required", []):
            if name not in value:
                problems.append(f"'{name}' is required")
        for name, item in value.items():
            if name not in properties:
                known = ", ".join(properties) or "none"
                problems.append(f"unknown property '{name}' (known: {known})")
            else:
                problems.extend(validate(properties[name], item, f"'{name}'"))
    return problems


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else type(value).__name__
