"""Media types of artifacts: normalized at promotion, judged when served (pure).

A stored media type is ``type/subtype`` in lower case, nothing else: parameters are dropped
(the store keeps bytes; text we encode is UTF-8 and is served with ``charset=utf-8``). A media
type with a control character (CR/LF would split a response header) or that is not
``type/subtype`` is refused. Only a short list of passive types is ever served inline; every
other type (all HTML, XML and SVG among them) is served as an attachment.
"""

from __future__ import annotations

import re

from ..contracts.errors import BadMediaType

# RFC 6838 restricted-name, for the type and the subtype.
_NAME = r"[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}"
_ESSENCE = re.compile(rf"\A({_NAME})/({_NAME})\Z")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")

# What a browser shows without running anything; the rest is downloaded.
INLINE = frozenset(
    {
        "image/png",
        "image/jpeg",
        "image/gif",
        "image/webp",
        "text/plain",
        "text/csv",
        "text/markdown",
        "application/json",
    }
)
FALLBACK = "application/octet-stream"


def normalize_media_type(value: str) -> str:
    """``value`` as ``type/subtype`` in lower case (parameters dropped), or :class:`BadMediaType`
    saying why not."""
    if _CONTROL.search(value):
        raise BadMediaType(f"{value!r} has a control character")
    essence = value.split(";", 1)[0].strip()
    if not _ESSENCE.match(essence):
        raise BadMediaType(f"{value[:100]!r} is not a media type (type/subtype)")
    return essence.lower()


def is_textual(media_type: str) -> bool:
    """Served with ``charset=utf-8``."""
    return (
        media_type.startswith("text/")
        or media_type in ("application/json", "application/xml", "image/svg+xml")
        or media_type.endswith(("+json", "+xml"))
    )


def served_as(stored: str) -> tuple[str, str]:
    """``(content type header, disposition)`` for a stored media type. A manifest written
    before normalization may hold anything: what does not normalize is served as bytes."""
    try:
        media_type = normalize_media_type(stored)
    except BadMediaType:
        media_type = FALLBACK
    header = f"{media_type}; charset=utf-8" if is_textual(media_type) else media_type
    return header, "inline" if media_type in INLINE else "attachment"
