"""Tool names on the provider wire (pure).

OpenAI and Anthropic accept only ``[A-Za-z0-9_-]{1,64}`` as tool names, while our tools are
named like ``subagents.delegate``. Names go out with ``.`` as ``__`` and come back mapped to the
name the run knows, so the runtime and the gateway never see the wire form.
"""

from __future__ import annotations

import copy
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
    """A copy of the request with wire-safe tool names, and the map back to the real names."""
    back: dict[str, str] = {}
    tools = body.get("tools")
    if not isinstance(tools, list):
        return body, back
    for tool in tools:
        name = (tool.get("function") or {}).get("name") if isinstance(tool, dict) else None
        if isinstance(name, str) and wire_name(name) != name:
            back[wire_name(name)] = name
    if not back:
        return body, back
    out = copy.deepcopy(body)
    forward = {v: k for k, v in back.items()}
    for tool in out["tools"]:
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and function.get("name") in forward:
            function["name"] = forward[function["name"]]
    for message in out.get("messages") or []:
        for call in (message.get("tool_calls") or []) if isinstance(message, dict) else []:
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict) and function.get("name") in forward:
                function["name"] = forward[function["name"]]
    return out, back


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
