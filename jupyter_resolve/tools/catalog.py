"""The tool catalogue: the builtin schemas from kernel_tools, each with its facts, and the bridge
tools the runtime is given (the OpenAI ``tools`` list the agent sees).

One fact, one place (issue 45.1): a builtin's effect, where it runs, the permissions it needs,
whether a peer may use it and whether the file-tool discipline applies are its schema's, in
``kernel_tools/builtin-tools.json``. The default allow list, the peer grants, the discipline, the
permission table and the approval policy read them from here; only the modules that implement a
tool (and the souls that offer it) name it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from importlib import resources
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

Permission = Literal["contents_read", "contents_write", "kernels_execute"]
"""The names of :class:`~jupyter_resolve.contracts.permissions.RunPermissions`' fields."""

PeerUse = Literal["yes", "sandboxed"]
"""Whether a peer may be granted the tool: always, or only while scratch kernels are sandboxed."""


class ToolSchema(BaseModel):
    """One entry of ``kernel_tools/builtin-tools.json`` (or an MCP server's tool as one)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    description: str
    parameters: dict[str, Any]
    effect: str
    approval: str = "auto"
    runs_in: str = "kernel"  # kernel (kernel_tools), gateway (a trusted tool), mcp
    needs: tuple[Permission, ...] = ()  # what the run's caller must be allowed (DESIGN 10.1)
    # and besides, while scratch kernels are not sandboxed: code that runs as the server's user
    # reaches what it can (its files, its processes' environment), so only a caller who may
    # read and write contents and execute kernels is offered it (DESIGN 10.1)
    needs_unsandboxed: tuple[Permission, ...] = ()
    peer: PeerUse | None = None  # None: sandboxed for an exec tool, else yes
    file_tool: bool = False  # works in the session workspace: the file-tool discipline applies
    always_ask: bool = False  # a person approves every call, whatever the policy (DESIGN 3.7)
    notebook_folder: bool = False  # in a notebook chat it runs in the notebook's folder
    loads_mentions: bool = False  # copies a notebook chat's mentioned variables for python

    def peer_use(self) -> PeerUse:
        if self.peer is not None:
            return self.peer
        return "sandboxed" if self.effect == "exec" else "yes"


def load_schemas() -> list[ToolSchema]:
    text = resources.files("kernel_tools").joinpath("builtin-tools.json").read_text("utf-8")
    return [ToolSchema.model_validate(t) for t in json.loads(text)["tools"]]


def default_allow(schemas: Iterable[ToolSchema]) -> list[str]:
    """The gateway's default allow list: every builtin, in schema order (configure with
    ``c.Resolve.allowed_tools``)."""
    return [schema.name for schema in schemas]


def needs_table(
    schemas: Iterable[ToolSchema], sandboxed: bool = True
) -> dict[str, tuple[str, ...]]:
    """Tool name → the permissions a run's caller needs for it (contracts/permissions.py),
    where scratch kernels are ``sandboxed`` (bubblewrap, or a cluster) or not."""
    return {
        schema.name: tuple(dict.fromkeys([*schema.needs, *schema.needs_unsandboxed]))
        if not sandboxed
        else tuple(schema.needs)
        for schema in schemas
    }


def named(schemas: Mapping[str, ToolSchema], names: Iterable[str], fact: str) -> list[str]:
    """The ``names`` whose schema has the boolean ``fact`` (e.g. ``file_tool``), in order."""
    return [n for n in names if (s := schemas.get(n)) is not None and getattr(s, fact)]


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


def implemented_names(gateway_tools: Iterable[str]) -> list[str]:
    """Implementations: the kernel_tools registry plus the tools the gateway implements itself
    (the names its implementing modules register: runs/builtin_tools.py, notebook/tools.py)."""
    from kernel_tools.registry import implemented_names as kernel_names

    return sorted({*kernel_names(), *gateway_tools})


def tool_lists(
    schemas: Sequence[ToolSchema], allowed: Sequence[str], gateway_tools: Iterable[str]
) -> dict[str, list[str]]:
    """The four lists of DESIGN 3.4."""
    return {
        "schemas": [s.name for s in schemas],
        "allow": list(allowed),
        "bridge": [t["function"]["name"] for t in bridge_tools(schemas, allowed)],
        "implementations": implemented_names(gateway_tools),
    }
