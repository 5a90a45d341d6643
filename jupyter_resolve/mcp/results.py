"""An MCP ``tools/call`` result as the gateway's :class:`ToolResult` (pure).

Text goes to the model; images (and audio) go to the clients as a MIME bundle, the model told
they were shown; a resource link is listed with its URI; an embedded resource is inlined when it
is text and listed when it is a blob. ``structuredContent`` is shown when there is no text. The
call's ``isError`` makes the result not ok. Every configured secret is withheld from all of it.
The input is the result as the MCP wire has it (``model_dump(by_alias=True)``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from ..contracts.bodies import ToolResult
from ..contracts.mcp_servers import redact

SHOWN_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp", "image/svg+xml")


def _link(uri: str, block: Mapping[str, Any]) -> str:
    name = block.get("name") or block.get("title") or ""
    mime = block.get("mimeType")
    extra = ", ".join(str(x) for x in (name, mime) if x)
    description = block.get("description")
    line = f"[resource {uri}{f' ({extra})' if extra else ''}]"
    return f"{line} {description}" if description else line


def _media(block: Mapping[str, Any], bundle: dict[str, Any], shown: list[str]) -> str | None:
    """An image or audio block: into the bundle when the clients can show it."""
    mime = str(block.get("mimeType") or "")
    data = block.get("data")
    if not isinstance(data, str):
        return f"[{block.get('type')} without data]"
    if mime in SHOWN_TYPES and mime not in bundle:
        bundle[mime] = data
        shown.append(mime)
        return None
    size = len(data) * 3 // 4
    return f"[{block.get('type')} {mime or 'of unknown type'}, {size} bytes, not shown]"


def _resource(block: Mapping[str, Any]) -> str:
    resource = block.get("resource")
    if not isinstance(resource, Mapping):
        return "[resource without contents]"
    uri = str(resource.get("uri", ""))
    if isinstance(resource.get("text"), str):
        return f"[resource {uri}]\n{resource['text']}"
    return _link(uri, resource) + " (binary, not shown)"


def map_result(raw: Mapping[str, Any], secrets: Iterable[str] = ()) -> ToolResult:
    """``raw`` (a CallToolResult's wire JSON) as a ToolResult, secrets withheld."""
    parts: list[str] = []
    bundle: dict[str, Any] = {}
    shown: list[str] = []
    content = raw.get("content")
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, Mapping):
            continue
        kind = block.get("type")
        if kind == "text":
            parts.append(str(block.get("text", "")))
        elif kind in ("image", "audio"):
            note = _media(block, bundle, shown)
            if note:
                parts.append(note)
        elif kind == "resource_link":
            parts.append(_link(str(block.get("uri", "")), block))
        elif kind == "resource":
            parts.append(_resource(block))
        else:
            parts.append(f"[{kind} content, not shown]")
    structured = raw.get("structuredContent")
    if structured is not None and not any(p.strip() for p in parts):
        parts.append(json.dumps(structured, indent=2, ensure_ascii=False))
    if shown:
        parts.append(f"[shown to the person: {', '.join(shown)}]")
    secrets = list(secrets)
    output = redact("\n".join(parts), secrets)
    if bundle and output:
        bundle["text/plain"] = output
    return ToolResult(ok=raw.get("isError") is not True, output=output, mime=bundle or None)
