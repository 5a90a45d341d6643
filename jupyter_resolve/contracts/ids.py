"""Ids clients send (DESIGN 9.4): sessions, runs, tasks, artifacts, proposals (pure).

One pattern, ``[A-Za-z0-9][A-Za-z0-9._-]{0,127}``, for bodies (the :data:`Id` type), route
arguments and query arguments (:func:`check_id`). Ids become file and folder names (a session's
workspace, a run's log), so the first character is never a dot: ``.`` and ``..`` are not ids.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import StringConstraints

from .errors import BadRequest

ID_PATTERN = r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}"
_ID = re.compile(rf"\A{ID_PATTERN}\Z")  # \Z: "$" would let a trailing newline through

Id = Annotated[str, StringConstraints(pattern=rf"^{ID_PATTERN}$")]
"""A pydantic-checked id (pydantic's regex ``$`` is the end of the text)."""


# A2A peers' sessions are named ``peer-<peer id>-<contextId>`` (peer/sessions.py): a person's
# runs may not take such an id, so nobody can plant a turn where a person reads it (issue 31.3)
PEER_SESSION_PREFIX = "peer-"


def is_id(value: object) -> bool:
    return isinstance(value, str) and _ID.match(value) is not None


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


def check_id(field: str, value: str) -> str:
    """``value`` if it is an id, else a :class:`BadRequest` naming ``field``."""
    if not is_id(value):
        shown = value if len(value) <= 80 else value[:80] + "…"
        raise BadRequest(
            f"{field}: {shown!r} is not an id (1-128 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit)",
            code="bad_id",
        )
    return value


def optional_id(field: str, value: str | None) -> str | None:
    """:func:`check_id` for an optional query argument (absent or empty: None)."""
    return None if value is None or value == "" else check_id(field, value)
