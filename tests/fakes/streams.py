"""Reading a provider's chunk stream back in tests: text, reasoning, tool calls, usage.

Tool calls are assembled the way DESIGN.md section 8 says a consumer must: a new ``id`` on a
repeated ``index`` is a new call; arguments are parsed only when the stream has ended.
"""

from __future__ import annotations

import json
from typing import Any

from jupyter_resolve.providers.base import Chunk, Provider


async def collect(
    provider: Provider, body: dict[str, Any], run_id: str | None = None
) -> list[Chunk]:
    """Every chunk of one completion."""
    return [chunk async for chunk in provider.stream_chat(body, run_id)]


def deltas(chunks: list[Chunk]) -> list[dict[str, Any]]:
    return [c["delta"] for chunk in chunks for c in chunk["choices"]]


def text(chunks: list[Chunk]) -> str:
    return "".join(d.get("content") or "" for d in deltas(chunks))


def reasoning(chunks: list[Chunk]) -> str:
    return "".join(d.get("reasoning_content") or "" for d in deltas(chunks))


def finish_reasons(chunks: list[Chunk]) -> list[str]:
    return [c["finish_reason"] for chunk in chunks for c in chunk["choices"] if c["finish_reason"]]


def usage(chunks: list[Chunk]) -> list[dict[str, Any]]:
    return [chunk["usage"] for chunk in chunks if chunk.get("usage")]


def tool_calls(chunks: list[Chunk]) -> list[dict[str, Any]]:
    """The calls as ``{"id", "name", "arguments": parsed}``, in order."""
    calls: list[dict[str, Any]] = []
    open_at: dict[int, dict[str, Any]] = {}
    for delta in deltas(chunks):
        for fragment in delta.get("tool_calls") or []:
            index = fragment.get("index", 0)
            current = open_at.get(index)
            new_id = fragment.get("id")
            if current is None or (new_id and current["id"] and new_id != current["id"]):
                current = {"id": new_id, "name": "", "arguments": ""}
                open_at[index] = current
                calls.append(current)
            function = fragment.get("function") or {}
            current["name"] += function.get("name") or ""
            current["arguments"] += function.get("arguments") or ""
    for call in calls:
        call["arguments"] = json.loads(call["arguments"] or "{}")
    return calls
