"""Bounds on what a peer sends (pure): ids per DESIGN 9.4 (``ids``) and JSON nested no deeper
than ``safejson.MAX_DEPTH``, so that bad input is a clear 400 or JSON-RPC error rather than
``ENAMETOOLONG`` or a ``RecursionError`` (a 500)."""

from __future__ import annotations

from typing import Any

from ..contracts import safejson
from ..contracts.errors import JsonBodyError, TooDeep
from ..contracts.ids import ID_PATTERN, is_id

__all__ = ["ID_PATTERN", "JsonBodyError", "id_problem", "is_id", "loads"]


def id_problem(what: str, value: Any) -> str | None:
    """None for a good id, else a message naming ``what`` and the rule (never the whole value:
    it may be huge)."""
    if is_id(value):
        return None
    if isinstance(value, str):
        shown = repr(value[:32]) + ("…" if len(value) > 32 else "")
    else:
        shown = f"a {type(value).__name__}"
    return (
        f"{what} must match {ID_PATTERN} (a letter or digit, then up to 127 of A-Z a-z 0-9 . _ -), "
        f"not {shown}"
    )


def loads(raw: bytes | str) -> Any:
    """The parsed body; :class:`JsonBodyError` for bad JSON or nesting past the limit."""
    try:
        return safejson.loads(raw or b"")
    except TooDeep as exc:
        raise JsonBodyError(f"JSON {exc}") from exc
    except ValueError as exc:
        raise JsonBodyError(f"not valid JSON ({exc})") from exc
