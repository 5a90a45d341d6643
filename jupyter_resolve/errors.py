"""The gateway's one error tree.

    ResolveError                 every error that reaches a client: a code and a message
    ├── BadRequest               a body, query or argument a client sent is wrong (400)
    ├── NotFound                 no such run, session, tool ... (404)
    ├── Conflict                 the state does not allow it (409)
    ├── Unavailable              the gateway cannot serve this now: drift, runtime down (503)
    └── ProviderError            the model provider failed; carries the HTTP status to
                                 report and a hint on what to check

Foreign errors are translated at the boundary with ``raise ... from exc``.
"""

from __future__ import annotations


class ResolveError(Exception):
    """Base error: ``code`` is a short machine word, ``message`` a sentence a person can act on."""

    status = 500
    code = "internal"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code

    def to_json(self) -> dict[str, object]:
        return {"error": {"code": self.code, "message": self.message}}


class BadRequest(ResolveError):
    status = 400
    code = "bad_request"


class NotFound(ResolveError):
    status = 404
    code = "not_found"


class Conflict(ResolveError):
    status = 409
    code = "conflict"


class Unavailable(ResolveError):
    status = 503
    code = "unavailable"


class ProviderError(ResolveError):
    """The provider failed. ``status`` is the HTTP status the gateway answers the runtime with
    (the provider's own status where there was one, 502 when it could not be reached, 504 on a
    timeout); ``hint`` says what to check; ``retryable`` marks 429/5xx/connection failures."""

    code = "provider_error"

    def __init__(
        self,
        message: str,
        *,
        status: int = 502,
        code: str | None = None,
        hint: str = "",
        retryable: bool = False,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message, code=code)
        self.status = status
        self.hint = hint
        self.retryable = retryable
        self.retry_after = retry_after

    def to_json(self) -> dict[str, object]:
        text = f"{self.message} — {self.hint}" if self.hint else self.message
        return {"error": {"code": self.code, "message": text, "type": "provider_error"}}
