"""A configured program spoken to over its stdin and stdout (pure): the ``command`` and ``env``
an external agent (``acp_agents``) and a stdio MCP server (``mcp_servers``) share.

``env`` values are secrets: they reach that program's process only (:meth:`ProcessSpec.secrets`
lists them for redaction); ``contracts/entries.py`` checks a configured entry against its model.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, field_validator

ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")


class ProcessSpec(BaseModel):
    """A program and its arguments, and the variables added to its trimmed environment."""

    model_config = ConfigDict(extra="forbid")

    command: list[str] = Field(min_length=1)
    env: dict[str, str] = Field(default_factory=dict)

    @field_validator("command")
    @classmethod
    def _command(cls, value: list[str]) -> list[str]:
        if not value[0].strip():
            raise ValueError("the first item must name the program to run")
        return value

    @field_validator("env")
    @classmethod
    def _env(cls, value: dict[str, str]) -> dict[str, str]:
        for name in value:
            if not ENV_NAME.match(name):
                raise ValueError(f"{name!r} is not an environment variable name")
        return value

    def secrets(self) -> list[str]:
        return list(self.env.values())
