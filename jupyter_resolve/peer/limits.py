"""Bounds on what a peer sends (pure): ids per DESIGN 9.4 (``ids``) and JSON nested no deeper
than ``safejson.MAX_DEPTH``, so that bad input is a clear 400 or JSON-RPC error rather than
``ENAMETOOLONG`` or a ``RecursionError`` (a 500)."""

from __future__ import annotations

from typing import Any

from ..contracts import safejson
from ..contracts.errors import JsonBodyError, TooDeep
from ..contracts.ids import ID_PATTERN, id_problem, is_id

__all__ = ["ID_PATTERN", "JsonBodyError", "id_problem", "is_id", "loads"]


def loads(raw: bytes | str) -> Any:
    """The parsed body; :class:`JsonBodyError` for bad JSON or nesting past the limit."""
    try:
        return safejson.loads(raw or b"")
    except TooDeep as exc:
        raise JsonBodyError(f"JSON {exc}") from exc
    except ValueError as exc:
        raise JsonBodyError(f"not valid JSON ({exc})") from exc
