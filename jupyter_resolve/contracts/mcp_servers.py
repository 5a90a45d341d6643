"""MCP servers the agent may use, as ``c.Resolve.mcp_servers`` names them (pure).

``{name: {"command": [...], "env": {...}}}`` starts a stdio server; ``{name: {"url": ...,
"headers_env": {header: ENV_VAR}}}`` reaches a streamable HTTP one. A server's tools join the
agent's as ``mcp.<server>.<tool>`` (``mcp__<server>__<tool>`` on provider wires, see
providers/wire_names.py), with an effect read from the tool's annotations and ``ask`` as their
default approval.

``env`` values and the values of the variables ``headers_env`` names are secrets: they go to the
MCP server's process or requests only. :func:`redact` takes them (and their base64 forms) out of
any text that leaves.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .entries import validated
from .process_spec import ENV_NAME, ProcessSpec
from .redaction import replace_forms, secret_forms

PREFIX = "mcp."
SERVER_NAME = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$"
_HEADER = re.compile(r"^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$")
# Values shorter than this are not treated as secrets when redacting ("1" is everywhere).
MIN_SECRET = 4
WITHHELD = "[withheld: an MCP server secret]"

Effect = Literal["read", "write", "exec"]


class StdioServer(ProcessSpec):
    """A server started as a process speaking MCP on its stdin and stdout."""

    def describe(self) -> dict[str, Any]:
        # the program only: arguments and env values may hold secrets
        return {"transport": "stdio", "command": self.command[0]}


class HttpServer(BaseModel):
    """A server reached over streamable HTTP; ``headers_env`` maps a header to the name of the
    environment variable (of the Jupyter server) holding its value."""

    model_config = ConfigDict(extra="forbid")

    url: str
    headers_env: dict[str, str] = Field(default_factory=dict)

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("must be an http:// or https:// URL")
        if parts.username or parts.password:
            raise ValueError("must not carry a user or password: use headers_env")
        return value

    @field_validator("headers_env")
    @classmethod
    def _headers(cls, value: dict[str, str]) -> dict[str, str]:
        for header, env in value.items():
            if not _HEADER.match(header):
                raise ValueError(f"{header!r} is not an HTTP header name")
            if not ENV_NAME.match(env):
                raise ValueError(f"{header}: {env!r} is not an environment variable name")
        return value

    def describe(self) -> dict[str, Any]:
        parts = urlsplit(self.url)  # no query: it may hold a key
        return {"transport": "http", "url": f"{parts.scheme}://{parts.netloc}{parts.path}"}


ServerSpec = StdioServer | HttpServer


def parse_servers(raw: Mapping[str, Any]) -> dict[str, ServerSpec]:
    """Check ``c.Resolve.mcp_servers``; ``ValueError`` names the server and field at fault
    (never a value: it may be a secret)."""
    servers: dict[str, ServerSpec] = {}
    for name, spec in raw.items():
        if not isinstance(name, str) or not re.match(SERVER_NAME, name):
            raise ValueError(
                f"Resolve.mcp_servers: {name!r} is not a server name (1-32 letters, digits, "
                "'_' or '-', starting with a letter or digit)"
            )
        if not isinstance(spec, Mapping) or ("command" in spec) == ("url" in spec):
            raise ValueError(
                f"Resolve.mcp_servers['{name}'] needs either 'command' (a list: program and "
                "arguments) or 'url'"
            )
        model: type[ServerSpec] = StdioServer if "command" in spec else HttpServer
        servers[name] = validated(model, spec, f"Resolve.mcp_servers['{name}']")
    return servers


def tool_name(server: str, tool: str) -> str:
    return f"{PREFIX}{server}.{tool}"


def split_name(name: str) -> tuple[str, str] | None:
    """``(server, tool)`` of an ``mcp.<server>.<tool>`` name, else None."""
    if not name.startswith(PREFIX):
        return None
    server, sep, tool = name[len(PREFIX) :].partition(".")
    return (server, tool) if sep and server and tool else None


def is_mcp(name: str) -> bool:
    return name.startswith(PREFIX)


def effect_of(annotations: Mapping[str, Any] | None) -> Effect:
    """readOnlyHint → read, destructiveHint → write, otherwise exec (a tool says nothing: it may
    do anything)."""
    hints = annotations or {}
    if hints.get("readOnlyHint") is True:
        return "read"
    if hints.get("destructiveHint") is True:
        return "write"
    return "exec"


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every secret value, and its base64 forms, replaced by a marker (literal
    matching: ``contracts/redaction.py``)."""
    return replace_forms(text, secret_forms(secrets, MIN_SECRET), WITHHELD)
