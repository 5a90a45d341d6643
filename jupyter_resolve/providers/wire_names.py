"""Tool names on the provider wire (pure).

OpenAI and Anthropic accept only ``[A-Za-z0-9_-]{1,64}`` as tool names, while our tools are
named like ``subagents.delegate``. Names go out with ``.`` as ``__`` and come back mapped to the
name the run knows, so the runtime and the gateway never see the wire form.
"""

from __future__ import annotations

import re
from typing import Any

_SAFE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def wire_name(name: str) -> str:
    return name if _SAFE.match(name) else re.sub(r"[^A-Za-z0-9_-]", "__", name)[:64]


def stable_order(body: dict[str, Any]) -> dict[str, Any]:
    """The request with its tools sorted by name: the same tool set is always the same
    prefix, which is what prompt caches (OpenAI's automatic one, Anthropic's breakpoints) key
    on."""
    tools = body.get("tools")
    if not isinstance(tools, list) or len(tools) < 2:
        return body

    def name(tool: Any) -> str:
        function = tool.get("function") if isinstance(tool, dict) else None
        value = function.get("name") if isinstance(function, dict) else None
        return value if isinstance(value, str) else ""

    return {**body, "tools": sorted(tools, key=name)}


def request_to_wire(body: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """The request with wire-safe tool names, and the map back to the real names.

    Only what is renamed is copied (the tool entries and the assistant turns that call a
    renamed tool): the rest of a long conversation is shared with ``body``, not deep-copied.
    """
    back: dict[str, str] = {}
    tools = body.get("tools")
    if not isinstance(tools, list):
        return body, back
    for tool in tools:
        name = _function_name(tool)
        if name is not None and wire_name(name) != name:
            back[wire_name(name)] = name
    if not back:
        return body, back
    forward = {v: k for k, v in back.items()}
    out = {**body, "tools": [_renamed(tool, forward) for tool in tools]}
    messages = body.get("messages")
    if isinstance(messages, list):
        out["messages"] = [_renamed_calls(message, forward) for message in messages]
    return out, back


def _function_name(item: Any) -> str | None:
    function = item.get("function") if isinstance(item, dict) else None
    name = function.get("name") if isinstance(function, dict) else None
    return name if isinstance(name, str) else None


def _renamed(item: Any, forward: dict[str, str]) -> Any:
    """A tool or a tool call with its function's name on the wire (a copy when renamed)."""
    name = _function_name(item)
    if name is None or name not in forward:
        return item
    return {**item, "function": {**item["function"], "name": forward[name]}}


def _renamed_calls(message: Any, forward: dict[str, str]) -> Any:
    calls = message.get("tool_calls") if isinstance(message, dict) else None
    if not isinstance(calls, list) or not calls:
        return message
    return {**message, "tool_calls": [_renamed(call, forward) for call in calls]}


def chunk_from_wire(chunk: dict[str, Any], back: dict[str, str]) -> dict[str, Any]:
    """Map tool names in a streamed chunk back (in place; returns it)."""
    if not back:
        return chunk
    for choice in chunk.get("choices") or []:
        delta = choice.get("delta") if isinstance(choice, dict) else None
        for call in (delta or {}).get("tool_calls") or []:
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict) and function.get("name") in back:
                function["name"] = back[function["name"]]
    return chunk
