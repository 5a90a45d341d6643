"""Scripting the offline model for a test: turns replayed one per inference call of a run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jupyter_resolve.providers import ScriptedProvider


def script(gateway: Any, tmp_path: Path, *turns: dict[str, Any]) -> None:
    """Make the gateway's model replay ``turns`` (a fresh script file each call)."""
    path = tmp_path / f"script-{len(list(tmp_path.iterdir()))}.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in turns))
    gateway.provider = ScriptedProvider(path)


def call(name: str, soul: str | None = None, **arguments: Any) -> dict[str, Any]:
    """A turn that calls one tool (answering for ``soul`` when given)."""
    turn: dict[str, Any] = {"content": "", "tool_calls": [{"name": name, "arguments": arguments}]}
    if soul:
        turn["soul"] = soul
    return turn
