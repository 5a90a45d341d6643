"""External agents as ``c.Resolve.acp_agents`` names them (pure, DESIGN 10.4).

``{name: {"command": [program, args...], "env": {NAME: value}, "description": "..."}}``: each
is spawned over stdio and spoken to with the Agent Client Protocol (``jupyter_resolve/acp/``).
``env`` values are secrets: they reach that agent's process only, and :func:`redact` takes them
(and their base64 forms) out of any text that leaves (its stderr in health, its errors).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import Field

from .entries import validated
from .process_spec import ProcessSpec
from .redaction import replace_forms, secret_forms

AGENT_NAME = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$"
_AGENT_NAME = re.compile(AGENT_NAME)
MIN_SECRET = 4  # shorter values are not treated as secrets ("1" is everywhere)
WITHHELD = "[withheld: an external agent's secret]"


class AgentSpec(ProcessSpec):
    """One external agent: the program speaking ACP on its stdin and stdout."""

    description: str = Field(default="", max_length=500)


def is_agent_name(value: object) -> bool:
    return isinstance(value, str) and _AGENT_NAME.match(value) is not None


def parse_agents(raw: Mapping[str, Any]) -> dict[str, AgentSpec]:
    """Check ``c.Resolve.acp_agents``; ``ValueError`` names the agent and field at fault (never
    a value: it may be a secret)."""
    agents: dict[str, AgentSpec] = {}
    for name, spec in raw.items():
        if not is_agent_name(name):
            raise ValueError(
                f"Resolve.acp_agents: {name!r} is not an agent name (1-32 letters, digits, '_' "
                "or '-', starting with a letter or digit)"
            )
        if not isinstance(spec, Mapping) or "command" not in spec:
            raise ValueError(
                f"Resolve.acp_agents['{name}'] needs 'command' (a list: program and arguments)"
            )
        agents[name] = validated(AgentSpec, spec, f"Resolve.acp_agents['{name}']")
    return agents


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every secret value, and its base64 forms, replaced by a marker."""
    return replace_forms(text, secret_forms(secrets, MIN_SECRET), WITHHELD)
