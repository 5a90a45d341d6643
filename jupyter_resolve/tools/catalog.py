"""The tool catalogue: schemas from kernel_tools, the default allow list, and the bridge tools
the runtime is given (the OpenAI ``tools`` list the agent sees)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from importlib import resources
from typing import Any

from pydantic import BaseModel, ConfigDict

# The gateway's default allow list: every builtin. Configure with c.Resolve.allowed_tools.
DEFAULT_ALLOW = (
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
)


# Tools the gateway runs itself (not in the kernel).
TRUSTED_TOOLS = (
    "web_fetch",
    "subagents.delegate",
    "artifacts.promote",
    "notebook_variables",
    "inspect_variable",
    "snapshot_variable",
    "notebook_propose",
)


class ToolSchema(BaseModel):
    """One entry of ``kernel_tools/builtin-tools.json``."""

    model_config = ConfigDict(extra="ignore")

    name: str
    description: str
    parameters: dict[str, Any]
    effect: str
    approval: str = "auto"
    runs_in: str = "kernel"


def load_schemas() -> list[ToolSchema]:
    text = resources.files("kernel_tools").joinpath("builtin-tools.json").read_text("utf-8")
    return [ToolSchema.model_validate(t) for t in json.loads(text)["tools"]]


def bridge_tools(schemas: Sequence[ToolSchema], allowed: Sequence[str]) -> list[dict[str, Any]]:
    """The OpenAI tools list for the runtime: every schema that is allowed, in schema order."""
    allow = set(allowed)
    return [
        {
            "type": "function",
            "function": {
                "name": schema.name,
                "description": schema.description,
                "parameters": schema.parameters,
            },
        }
        for schema in schemas
        if schema.name in allow
    ]


def implemented_names() -> list[str]:
    """Implementations: the kernel_tools registry plus the gateway's trusted tools."""
    from kernel_tools.registry import implemented_names as kernel_names

    return sorted({*kernel_names(), *TRUSTED_TOOLS})


def tool_lists(schemas: Sequence[ToolSchema], allowed: Sequence[str]) -> dict[str, list[str]]:
    """The four lists of DESIGN 3.4."""
    return {
        "schemas": [s.name for s in schemas],
        "allow": list(allowed),
        "bridge": [t["function"]["name"] for t in bridge_tools(schemas, allowed)],
        "implementations": implemented_names(),
    }
