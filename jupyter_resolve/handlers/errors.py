"""One error path for every handler: a :class:`ResolveError` raised by a handler is answered
as ``{"error": {"code", "message"}}`` with its status (once a stream has started, tornado can
only close the connection, as for any error)."""

from __future__ import annotations

import json
from types import TracebackType
from typing import Any

from pydantic import ValidationError
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


def validation_message(exc: ValidationError) -> str:
    """``field.path: what is wrong`` for the first error, so a 400 names the field."""
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or "body"
    return f"{where}: {err['msg']}"


class AnswersQuietly(web.RequestHandler):
    """A handler base whose answers (:func:`is_answer`) tornado does not log as crashes."""

    def log_exception(
        self,
        typ: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if not is_answer(value):
            super().log_exception(typ, value, tb)
