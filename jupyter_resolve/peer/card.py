"""The A2A Agent Card, built from the souls and the tools peers are granted. Pure.

One card for both protocol lines: the v1.0 fields (``supportedInterfaces``, wrapped security
schemes, ``securityRequirements``) beside the v0.3 ones (top-level ``url``, ``protocolVersion``,
``preferredTransport``, ``type``-tagged schemes, ``security``), so that a2a-sdk 0.3 and 1.x (and
its v0.3 compatibility model) all read it; each ignores the other line's fields.

The card offers only what a peer may use: a default ``answer`` skill (a run with the granted
tools, none by default) and the souls whose tools are all granted. It declares how to
authenticate: the HMAC signature of a configured peer, or a Jupyter token (DESIGN 3.8).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from .catalogue import SoulEntry, cut, public_text
from .grants import soul_needs, usable_souls

DESCRIPTION = (
    "A research workbench inside Jupyter: a multi-role agent that plans, runs Python in a "
    "scratch kernel of its own, reads files and answers in text. Send it a task as a message; "
    "it runs as a background job you can poll, stream or cancel."
)

ANSWER_SKILL = "answer"

SIGNATURE_SCHEME = "resolveSignature"
TOKEN_SCHEME = "jupyterToken"

SIGNATURE_DESCRIPTION = (
    "A configured peer signs each request: 'v2=' + hex HMAC-SHA256, under the secret "
    "it shares with this server, of METHOD\\nPATH\\nHOST\\nPEER\\nTIMESTAMP\\nNONCE\\n"
    "BODY, sent with X-Resolve-Peer, X-Resolve-Timestamp (unix seconds, within "
    "300 s) and X-Resolve-Nonce (used once). Its jobs use only the tools granted "
    "to it."
)
TOKEN_DESCRIPTION = (
    "A Jupyter login: Authorization: token <Jupyter token> (or Bearer); the jobs "
    "belong to that user (one owner per token for a token-only login) and the server's "
    "Authorizer decides."
)

SIGNATURE = {"name": "X-Resolve-Signature", "description": SIGNATURE_DESCRIPTION}
TOKEN = {"scheme": "Bearer", "description": TOKEN_DESCRIPTION}

SECURITY_SCHEMES: dict[str, Any] = {
    # v0.3 reads the type-tagged fields, v1.0 the wrapper (a2a-sdk 1.x also maps the v0.3 form)
    SIGNATURE_SCHEME: {
        "type": "apiKey",
        "in": "header",
        **SIGNATURE,
        "apiKeySecurityScheme": {"location": "header", **SIGNATURE},
    },
    TOKEN_SCHEME: {"type": "http", **TOKEN, "httpAuthSecurityScheme": TOKEN},
}

SECURITY_REQUIREMENTS: list[dict[str, Any]] = [
    {"schemes": {SIGNATURE_SCHEME: {"list": []}}},
    {"schemes": {TOKEN_SCHEME: {"list": []}}},
]
"""Either scheme will do (each entry is an alternative; v1.0)."""

SECURITY: list[dict[str, list[str]]] = [{SIGNATURE_SCHEME: []}, {TOKEN_SCHEME: []}]
"""The same alternatives in v0.3's form."""

PROTOCOL_VERSION = "0.3.0"
"""What the top-level (v0.3) fields speak; ``supportedInterfaces`` also offers 1.0."""


def _answer_skill(granted: Sequence[str]) -> dict[str, Any]:
    uses = f"with the tools {', '.join(granted)}" if granted else "from the model alone, no tools"
    return {
        "id": ANSWER_SKILL,
        "name": ANSWER_SKILL,
        "description": cut(f"Answers a task in text, {uses}."),
        "tags": [ANSWER_SKILL, *(cut(t, 64) for t in granted)],
    }


def build_card(
    *,
    interface_url: str,
    version: str,
    souls: Iterable[SoulEntry],
    allowed: Sequence[str],
    granted: Sequence[str],
    redact: Iterable[str] = (),
) -> dict[str, Any]:
    """The card: the ``answer`` skill, then one skill per soul whose tools are all in
    ``granted``, tagged with its role and those tools."""
    secrets = list(redact)
    skills = [_answer_skill([t for t in allowed if t in set(granted)])]
    for soul in usable_souls(souls, granted, allowed):
        tags = ["soul", *([soul.role] if soul.role else []), *soul_needs(soul, allowed)]
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
        "url": interface_url,
        "preferredTransport": "JSONRPC",
        "protocolVersion": PROTOCOL_VERSION,
        "supportedInterfaces": [
            {"url": interface_url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": interface_url, "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
        ],
        "capabilities": {
            "streaming": True,
            "pushNotifications": False,
            "extendedAgentCard": False,
        },
        "securitySchemes": SECURITY_SCHEMES,
        "securityRequirements": SECURITY_REQUIREMENTS,
        "security": SECURITY,
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": skills,
    }
