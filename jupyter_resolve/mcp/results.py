"""An MCP ``tools/call`` result as the gateway's :class:`ToolResult` (pure).

Text goes to the model; images (and audio) go to the clients as a MIME bundle, the model told
they were shown; a resource link is listed with its URI; an embedded resource is inlined when it
is text and listed when it is a blob. ``structuredContent`` is shown when there is no text. The
call's ``isError`` makes the result not ok. Every configured secret is withheld from all of it:
literal values and their base64 forms, in text and inside an SVG (sent base64-encoded, kept as
markup); a binary image that carries one is not shown.
The input is the result as the MCP wire has it (``model_dump(by_alias=True)``).
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable, Mapping
from typing import Any

from ..contracts.bodies import ToolResult
from ..contracts.mcp_servers import MIN_SECRET, WITHHELD
from ..contracts.redaction import holds_secret, replace_forms, secret_forms

SHOWN_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp", "image/svg+xml")


def _link(uri: str, block: Mapping[str, Any]) -> str:
    name = block.get("name") or block.get("title") or ""
    mime = block.get("mimeType")
    extra = ", ".join(str(x) for x in (name, mime) if x)
    description = block.get("description")
    line = f"[resource {uri}{f' ({extra})' if extra else ''}]"
    return f"{line} {description}" if description else line


def _decoded(data: str) -> bytes | None:
    try:
        return base64.b64decode("".join(data.split()), validate=True)
    except (binascii.Error, ValueError):
        return None


def _svg_text(data: str, forms: list[str]) -> str | None:
    """An SVG image's markup, secrets withheld: MCP sends it base64-encoded, a MIME bundle
    (and both clients, which show it as an ``<img>`` data URL) holds it as text."""
    if data.lstrip().startswith("<"):
        text = data  # sent as markup, not base64
    else:
        raw = _decoded(data)
        if raw is None:
            return None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            return None
    return replace_forms(text, forms, WITHHELD)


def _media(
    block: Mapping[str, Any], bundle: dict[str, Any], shown: list[str], forms: list[str]
) -> str | None:
    """An image or audio block: into the bundle when the clients can show it; an SVG as its
    markup with secrets withheld; a binary image that carries a secret is not shown."""
    kind, mime = block.get("type"), str(block.get("mimeType") or "")
    data = block.get("data")
    if not isinstance(data, str):
        return f"[{kind} without data]"
    if mime not in SHOWN_TYPES or mime in bundle:
        size = len(data) * 3 // 4
        return f"[{kind} {mime or 'of unknown type'}, {size} bytes, not shown]"
    if mime == "image/svg+xml":
        svg = _svg_text(data, forms)
        if svg is None:
            return f"[{kind} {mime}: not base64-encoded UTF-8, not shown]"
        bundle[mime] = svg
    else:
        raw = _decoded(data)
        if raw is None:
            return f"[{kind} {mime}: not valid base64, not shown]"
        if holds_secret(raw, forms):
            return f"[{kind} {mime} withheld: it contains an MCP server secret]"
        bundle[mime] = data
    shown.append(mime)
    return None


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
    forms = secret_forms(secrets, MIN_SECRET)
    content = raw.get("content")
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, Mapping):
            continue
        kind = block.get("type")
        if kind == "text":
            parts.append(str(block.get("text", "")))
        elif kind in ("image", "audio"):
            note = _media(block, bundle, shown, forms)
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
    output = replace_forms("\n".join(parts), forms, WITHHELD)
    if bundle and output:
        bundle["text/plain"] = output
    return ToolResult(ok=raw.get("isError") is not True, output=output, mime=bundle or None)
