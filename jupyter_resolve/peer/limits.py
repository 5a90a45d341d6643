"""Bounds on what a peer sends (pure): ids per DESIGN 9.4 (``ids``) and JSON nested no deeper
than ``safejson.MAX_DEPTH``, so that bad input is a clear 400 or JSON-RPC error rather than
``ENAMETOOLONG`` or a ``RecursionError`` (a 500); and how many jobs a peer may submit in a
window of time (:class:`SubmitWindow`)."""

from __future__ import annotations

import math
from collections import deque
from typing import Any

from ..contracts import safejson
from ..contracts.errors import JsonBodyError, TooDeep
from ..contracts.ids import ID_PATTERN, id_problem, is_id

__all__ = ["ID_PATTERN", "JsonBodyError", "SubmitWindow", "id_problem", "is_id", "loads"]


def loads(raw: bytes | str) -> Any:
    """The parsed body; :class:`JsonBodyError` for bad JSON or nesting past the limit."""
    try:
        return safejson.loads(raw or b"")
    except TooDeep as exc:
        raise JsonBodyError(f"JSON {exc}") from exc
    except ValueError as exc:
        raise JsonBodyError(f"not valid JSON ({exc})") from exc


class SubmitWindow:
    """At most ``limit`` submissions per caller in any ``seconds`` (a sliding window: the times
    of the last ``limit`` accepted submissions are kept per caller). ``limit`` 0: no bound."""

    def __init__(self, limit: int, seconds: float = 60.0) -> None:
        self.limit = limit
        self.seconds = seconds
        self.times: dict[str, deque[float]] = {}

    def admit(self, caller: str, now: float) -> int:
        """Count one submission at ``now`` and return 0; when over the bound count nothing and
        return the whole seconds until one more would be admitted (at least 1)."""
        if self.limit <= 0:
            return 0
        times = self.times.setdefault(caller, deque())
        while times and times[0] <= now - self.seconds:
            times.popleft()
        if len(times) >= self.limit:
            return max(1, math.ceil(times[0] + self.seconds - now))
        times.append(now)
        return 0
