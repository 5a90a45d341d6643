"""Which model a request may use (pure): ``c.Resolve.allowed_models`` (DESIGN 3.5).

The allowlist is enforced where every entry point meets (starting a run), so no client, the
facade, a task or a peer can reach a model the admin did not list.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .errors import BadRequest


def default_model(allowed: Sequence[str], configured: str) -> str:
    """The model of a request that names none: the configured one, or, when the allowlist
    leaves it out, the first allowed."""
    if allowed and configured not in allowed:
        return allowed[0]
    return configured


def choose_model(requested: str | None, allowed: Sequence[str], configured: str) -> str:
    """The model a run uses; BadRequest (400) naming the allowed ones when ``requested`` is
    not among them."""
    if not requested:
        return default_model(allowed, configured)
    if allowed and requested not in allowed:
        raise BadRequest(
            f"model: '{requested}' is not allowed here; the allowed models are "
            + ", ".join(allowed)
            + " (c.Resolve.allowed_models)",
            code="model_not_allowed",
        )
    return requested


def listed_models(
    offered: Sequence[dict[str, Any]], allowed: Sequence[str]
) -> list[dict[str, Any]]:
    """The provider's models a client may pick: all of them, or only the allowed ones (an
    allowed model the provider did not list stays, marked ``listed: false``)."""
    if not allowed:
        return [dict(m) for m in offered]
    by_id = {str(m.get("id")): m for m in offered}
    return [
        {**by_id[name], "listed": True} if name in by_id else {"id": name, "listed": False}
        for name in allowed
    ]
