"""The run manifest (pure): frozen at start so a result can name exactly what produced it."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def digest(value: Any) -> str:
    canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def tool_entry(spec: dict[str, Any]) -> dict[str, str]:
    """A tool as the manifest names it: its name and the sha256 of its function schema."""
    return {"name": spec["function"]["name"], "sha256": digest(spec["function"])}


def run_manifest(
    *,
    provider: str,
    model: str,
    soul: str | None,
    tools: list[dict[str, str]],
    context_digest: str | None,
    limits: dict[str, Any],
    version: str,
    instructions: list[dict[str, Any]] | None = None,
    transcript_digest: str | None = None,
) -> dict[str, Any]:
    """Provider, model, soul, each tool with the sha256 of its schema (``tools``: the
    :func:`tool_entry` of each, computed once per catalogue), context digest, budgets,
    the project instructions used (path and sha256 of each) and the digest of the transcript
    sent as history (None for a stateless chat); ``sha256`` is the digest of all the rest."""
    body = {
        "version": version,
        "provider": provider,
        "model": model,
        "soul": soul,
        "tools": list(tools),
        "context_sha256": context_digest,
        "budget": limits,
        "instructions": list(instructions or []),
        "transcript_sha256": transcript_digest,
    }
    return {**body, "sha256": digest(body)}
