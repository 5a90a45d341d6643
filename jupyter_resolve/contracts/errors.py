"""The package's one error tree (pure): every exception class jupyter_resolve defines.

    ResolveError                 a code and a message a person can act on (500 unless below)
    ├── BadRequest               a body, query or argument a client sent is wrong (400)
    │   ├── TooDeep              JSON nested past the limit (contracts.safejson; a ValueError)
    │   ├── JsonBodyError        a peer's body is not JSON or nests too deep (a ValueError)
    │   ├── BadMediaType         not a media type the artifact store keeps (a ValueError)
    │   └── NotebookTextError    an agent's write is not a notebook (acp/notebook_write.py;
    │                            a ValueError)
    ├── NotFound                 no such run, session, tool ... (404)
    ├── Conflict                 the state does not allow it (409)
    │   └── StaleTarget          a proposal's cell changed since (notebook/proposals.py)
    ├── Forbidden                the caller's permissions do not allow it (403)
    ├── Locked                   a feature the administrator's policy switched off (403)
    ├── TooManyRequests          a caller went over a rate; ``retry_after`` seconds (429)
    ├── TooLarge                 a body or a field over its bound (413)
    ├── Unavailable              the gateway cannot serve this now: drift, runtime down (503)
    │   ├── RuntimeStartError    agent-httpd could not be started
    │   ├── RuntimeGone          agent-httpd dropped a run's stream (it died, or restarts)
    │   ├── ScratchKernelUnavailable  a scratch kernel cannot start (scratch/kernelspec.py)
    │   └── SessionUnavailable   a supervised child cannot be reached (supervised.py)
    │       ├── AgentUnavailable     an external agent (acp/agents.py)
    │       └── McpUnavailable       an MCP server (mcp/connections.py)
    ├── RuntimeRejected          agent-httpd answered /chat with an error status
    ├── ProviderError            the model provider failed; carries the HTTP status to
    │   │                        report and a hint on what to check
    │   └── LocalModelError      the local model server (providers/local_server.py)
    ├── RawHTTPError             a provider's connection failed or did not speak HTTP/1.1
    │   ├── RawTimeout           (providers/raw_http.py): nothing came in time
    │   └── _NoAnswer            closed before any answer
    ├── ChunkedError             a body breaks the chunked coding (providers/chunked.py;
    │                            a ValueError)
    ├── EventTooLarge            a provider's stream event past its bound (providers/relay.py;
    │                            a ValueError)
    ├── SignatureError           a peer's signed request was refused (401)
    ├── RpcError                 a JSON-RPC error answer (its ``code`` is the JSON-RPC number)
    │   └── RateLimited          a peer over its rate (peer/jsonrpc.py)
    ├── SoulError                a soul file that cannot be read (a ValueError)
    ├── PolicyError              the admin policy file cannot be used (contracts/admin_policy.py;
    │                            a ValueError)
    ├── FsRefused                an external agent's file request refused (acp/client.py)
    │   └── NotAccepted          its notebook write's proposals were not all accepted
    ├── Replaced                 a newer completion request replaced this one
    │                            (completion/handlers.py)
    ├── RunLogError              the run log could not be written (an OSError)
    ├── ClientError              the magics' request to the gateway failed (status 0: no
    │   └── ConnectionMissing    answer); the environment does not say where the gateway is
    └── the hub service's (hub/): ConfigProblem (a ValueError), DatabaseError and
        NoAccessScope (RuntimeErrors), UpstreamUnreachable (a ConnectionError)

Foreign errors are translated at the boundary with ``raise ... from exc``. Where an error must
also be a ``ValueError`` or an ``OSError`` (callers that catch those), that is a second base.
Outside the tree, on purpose: ``notebook/inspector.py``'s TimeLimit and TooLarge (its source runs
in the user's kernel, which has nothing of the package; they never leave it) and ``%resolve``'s
RunInterrupted (a KeyboardInterrupt, as IPython shows an interrupt: as an Exception every
``except Exception`` on its way would swallow the person's interrupt).
``tests/jupyter_resolve/test_error_tree.py`` holds every class to this.
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


class Forbidden(ResolveError):
    """What the caller's permissions (the server's Authorizer) do not allow (403); the message
    names what is missing."""

    status = 403
    code = "forbidden"


class Locked(ResolveError):
    """A feature the administrator's policy switched off: set by the administrator (403)."""

    status = 403
    code = "locked"


class TooManyRequests(ResolveError):
    """Over a rate limit; ``retry_after`` is the whole seconds until one more is accepted."""

    status = 429
    code = "too_many_requests"

    def __init__(self, message: str, *, retry_after: int, code: str | None = None) -> None:
        super().__init__(message, code=code)
        self.retry_after = retry_after


class TooLarge(ResolveError):
    """A body or a field over its bound (413); the message names the bound."""

    status = 413
    code = "too_large"


class Unavailable(ResolveError):
    status = 503
    code = "unavailable"


class ProviderError(ResolveError):
    """The provider failed. ``status`` is the HTTP status the gateway answers the runtime with
    (the provider's own status where there was one, 502 when it could not be reached, 504 on a
    timeout); ``hint`` says what to check; ``retryable`` marks 429/5xx/connection failures.
    ``detail`` is the provider's own words (or the connection's failure), key blanked; ``plain``,
    once the gateway has worded the failure for a person (providers/reachability.py), is what
    the runtime is answered with."""

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
        detail: str = "",
    ) -> None:
        super().__init__(message, code=code)
        self.status = status
        self.hint = hint
        self.retryable = retryable
        self.retry_after = retry_after
        self.detail = detail
        self.plain = ""

    def to_json(self) -> dict[str, object]:
        text = self.plain or (f"{self.message} — {self.hint}" if self.hint else self.message)
        return {"error": {"code": self.code, "message": text, "type": "provider_error"}}


class TooDeep(BadRequest, ValueError):
    """The JSON nests arrays and objects deeper than allowed."""

    def __init__(self, max_depth: int) -> None:
        super().__init__(f"nested deeper than {max_depth} levels")
        self.max_depth = max_depth


class JsonBodyError(BadRequest, ValueError):
    """A body that is not JSON, or nests too deep; the message says which."""


class BadMediaType(BadRequest, ValueError):
    """Not a media type we store."""

    code = "bad_media_type"


class RuntimeStartError(Unavailable):
    """agent-httpd could not be started; the message says why."""

    code = "runtime_unavailable"


class RuntimeGone(Unavailable):
    """The runtime closed or dropped the connection before the run ended."""

    code = "runtime_died"


class RuntimeRejected(ResolveError):
    """The runtime answered /chat with an error status (``status``: the runtime's)."""

    code = "runtime_rejected"

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"runtime answered {status}: {message}")
        self.status = status


class SignatureError(ResolveError):
    """Why a signed request was refused (the handler answers 401)."""

    status = 401
    code = "bad_signature"

    def __init__(self, message: str, *, reason: str) -> None:
        super().__init__(message)
        self.reason = reason  # a short word for the log: unknown_peer, bad_signature, stale, ...


class RpcError(ResolveError):
    """A JSON-RPC error answer: ``code`` is the JSON-RPC error number."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code  # type: ignore[assignment]  # JSON-RPC codes are numbers


class SoulError(ResolveError, ValueError):
    """A soul file that cannot be read; the message names the file and the problem."""

    code = "bad_soul"


class RunLogError(ResolveError, OSError):
    """The run log could not be written (a full disk, a removed folder)."""


class ClientError(ResolveError):
    """A request to the gateway failed; ``status`` is the HTTP status (0: no answer)."""

    def __init__(self, message: str, *, status: int = 0, code: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.code = code


class ConnectionMissing(ClientError):
    """The environment does not say where the gateway is."""
