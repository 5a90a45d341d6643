"""One error path for every handler: a :class:`ResolveError` raised by a handler is answered
as ``{"error": {"code", "message"}}`` with its status (once a stream has started, tornado can
only close the connection, as for any error)."""

from __future__ import annotations

import json
from typing import Any

from tornado import web

from ..contracts.errors import ResolveError, TooManyRequests


def raised(kwargs: dict[str, Any]) -> BaseException | None:
    """The exception ``write_error`` was called for, if any."""
    exc_info = kwargs.get("exc_info")
    return exc_info[1] if exc_info else None


def write_resolve_error(handler: web.RequestHandler, exc: ResolveError) -> None:
    """Answer ``exc`` as JSON with its status."""
    handler.set_status(exc.status)
    if isinstance(exc, TooManyRequests):
        handler.set_header("Retry-After", str(exc.retry_after))
    handler.set_header("Content-Type", "application/json")
    handler.finish(json.dumps(exc.to_json()))


def is_answer(value: BaseException | None) -> bool:
    """A ResolveError other than ``internal`` is an answer, not a crash: tornado need not log
    it as an uncaught exception (the access log shows its status)."""
    return isinstance(value, ResolveError) and value.code != "internal"
