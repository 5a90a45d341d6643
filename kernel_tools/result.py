"""The one result every tool returns, and the output bound (DESIGN 3.3)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

RESULT_MIME = "application/vnd.resolve.result+json"
OUTPUT_LIMIT = 20_000


@dataclass(frozen=True)
class Result:
    ok: bool
    output: str
    mime: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "output": self.output, "mime": self.mime}


def ok(output: str, mime: dict[str, Any] | None = None) -> Result:
    return Result(True, output, mime)


def error(output: str) -> Result:
    return Result(False, output, None)


def truncate(text: str, limit: int = OUTPUT_LIMIT) -> str:
    """``text`` cut to ``limit`` characters, with a marker saying how much was shown."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[output truncated: {limit} of {len(text)} characters shown]"
