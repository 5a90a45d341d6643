"""JSON from clients with a nesting limit (pure).

``json.loads`` recurses once per level of nesting, so ``[[[[...]]]]`` a few thousand deep raises
``RecursionError`` (a 500, and whatever holds the value later recurses again). :func:`loads`
measures the depth first, in linear time without recursion, and refuses a body nested deeper
than ``max_depth`` with :class:`TooDeep`. Every error it raises is a ``ValueError``
(``json.JSONDecodeError``, ``UnicodeDecodeError``, :class:`TooDeep`), so one ``except
ValueError`` turns them all into a 400.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .errors import TooDeep

MAX_DEPTH = 64

# A JSON string (escapes included) and a run of anything but brackets: removing both leaves the
# bracket skeleton, whose running balance is the nesting depth.
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


def nesting_depth(text: str, stop_above: int | None = None) -> int:
    """The deepest nesting of arrays and objects in ``text`` (0 for a scalar); stops counting
    once past ``stop_above``. Exact for valid JSON; for invalid JSON never below what a parser
    would recurse into before failing."""
    skeleton = _NOT_BRACKET.sub("", _STRING.sub("", text))
    depth = deepest = 0
    for char in skeleton:
        if char in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if stop_above is not None and deepest > stop_above:
                    break
        else:
            depth -= 1
    return deepest


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def loads(
    data: str | bytes | bytearray, *, max_depth: int = MAX_DEPTH, allow_nan: bool = True
) -> Any:
    """``json.loads(data)``, refusing nesting deeper than ``max_depth`` before parsing; with
    ``allow_nan=False`` also ``NaN`` and ``Infinity``, which JSON does not have."""
    text = (
        data.decode(json.detect_encoding(data), "strict")
        if isinstance(data, bytes | bytearray)
        else data
    )
    # Cheap bound first: fewer opening brackets than the limit cannot nest past it.
    if text.count("[") + text.count("{") > max_depth:
        if nesting_depth(text, stop_above=max_depth) > max_depth:
            raise TooDeep(max_depth)
    try:
        return json.loads(text, parse_constant=None if allow_nan else _no_constant)
    except RecursionError as exc:  # not expected under the limit; never a 500 either way
        raise TooDeep(max_depth) from exc
