"""The A2A Agent Card (v1.0 fields), built from the souls and the allowed tools. Pure."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from .catalogue import SoulEntry, cut, public_text

CARD_PATH = "resolve/.well-known/agent-card.json"
"""Where the card is served, under the server's base_url."""

JSONRPC_PATH = "resolve/peer/a2a"
"""The JSON-RPC interface the card names, under the server's base_url."""

INVOKE_PATH = "resolve/peer/invoke"
"""The signed ``{tool, arguments}`` endpoint, under the server's base_url."""

DESCRIPTION = (
    "A research workbench inside Jupyter: a multi-role agent that plans, runs Python in a "
    "scratch kernel of its own, reads files and answers in text. Send it a task as a message; "
    "it runs as a background job you can poll or cancel."
)


def build_card(
    *,
    interface_url: str,
    version: str,
    souls: Iterable[SoulEntry],
    tools: Sequence[str],
    redact: Iterable[str] = (),
) -> dict[str, Any]:
    """The card: one skill per soul, tagged with its role and the allowed tools it may use."""
    secrets = list(redact)
    allowed = list(tools)
    skills = []
    for soul in souls:
        usable = [t for t in soul.tools if t in allowed] if soul.tools else allowed
        tags = ["soul", *([soul.role] if soul.role else []), *usable]
        skills.append(
            {
                "id": public_text(soul.name, secrets),
                "name": public_text(soul.name, secrets),
                "description": public_text(soul.description or soul.name, secrets),
                "tags": [cut(t, 64) for t in dict.fromkeys(tags)],
            }
        )
    return {
        "name": "jupyter-resolve",
        "description": DESCRIPTION,
        "version": version,
        "supportedInterfaces": [
            {"url": interface_url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": interface_url, "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
        ],
        "capabilities": {
            "streaming": False,
            "pushNotifications": False,
            "extendedAgentCard": False,
        },
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": skills,
    }
