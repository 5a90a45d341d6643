"""What every public handler shares: authentication and authorization, body parsing, JSON
errors, SSE streaming, and reaching the services the extension put in the server's settings.

Plumbing only: each service's handlers live beside it (``runs/handlers.py``,
``artifacts/handlers.py``...), as jupyter_server keeps ``services/<name>/handlers.py`` beside its
manager, and read the services they use from the settings by name (:meth:`service`).
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Callable
from typing import Any, TypeVar, cast

from jupyter_core.utils import ensure_async
from jupyter_server.auth.authorizer import Authorizer
from jupyter_server.auth.decorator import authorized as jupyter_authorized
from jupyter_server.auth.identity import User
from jupyter_server.base.handlers import APIHandler
from pydantic import BaseModel, ValidationError
from tornado import web

from ..contracts.errors import BadRequest, ResolveError, TooDeep
from ..contracts.ownership import OTHERS, Viewer
from ..contracts.permissions import ASKED, RunPermissions
from ..contracts.safejson import loads
from .errors import AnswersQuietly, raised, validation_message, write_resolve_error
from .live import EventSource, LiveEvents

ModelT = TypeVar("ModelT", bound=BaseModel)
MethodT = TypeVar("MethodT", bound=Callable[..., Any])


def authorized(action: str) -> Callable[[MethodT], MethodT]:
    """jupyter_server's ``@authorized(action)`` on the handler's ``auth_resource``, typed (its
    own signature leaves mypy an untyped decorator). Under ``@web.authenticated``."""
    return cast("Callable[[MethodT], MethodT]", jupyter_authorized(action))


class KernelTokenAuthorizer(Authorizer):
    """What a request carrying the kernel token may do: everything under /resolve/api/.

    The token reaches only the server's own kernels, whose code already runs as the server's
    user (it reads any file, every run log and the server's own token directly), and whoever
    runs code there was allowed ``kernels`` execute by the server's Authorizer. That Authorizer
    judges people (JupyterHub's needs a hub user), so it is not asked about the kernel token.
    """

    def is_authorized(self, handler: Any, user: User, action: str, resource: str) -> bool:
        return resource in ("resolve", "contents", "kernels", OTHERS)


class ResolveHandler(AnswersQuietly, APIHandler):
    """Base of the public API handlers (Jupyter-authenticated).

    Every method is wrapped in ``@web.authenticated`` and jupyter_server's ``@authorized``
    with the resource ``resolve`` (DESIGN 9.4: read for GETs, execute for chat, tasks, cancels
    and approvals, write for promotions); a request that names a file or notebook also needs
    ``contents`` read (:meth:`require`), one that reaches the user's kernel ``kernels`` execute.

    Under ``/resolve/api/`` they also accept ``Authorization: token|Bearer
    <JUPYTER_RESOLVE_TOKEN>``, the token the server exports to its kernels; no other handler of
    the server accepts it.
    """

    auth_resource = "resolve"
    KERNEL_USER = "jupyter-resolve-kernel"
    _kernel_authorizer = KernelTokenAuthorizer()
    _by_kernel_token = False

    def kernel_token_user(self) -> User | None:
        """The user of a request carrying the kernel token under /resolve/api/, else None."""
        expected = self.settings.get("resolve_kernel_token")
        scheme, _, token = self.request.headers.get("Authorization", "").strip().partition(" ")
        if not expected or scheme.lower() not in ("token", "bearer") or not token.strip():
            return None
        api = self.base_url.rstrip("/") + "/resolve/api/"
        if not self.request.path.startswith(api):
            return None
        if not hmac.compare_digest(token.strip().encode(), str(expected).encode()):
            return None
        return User(username=self.KERNEL_USER)

    async def prepare(self) -> None:  # type: ignore[override]
        user = self.kernel_token_user()
        if user is None:
            await super().prepare()  # normal Jupyter auth: token, cookie + XSRF, hub
            return
        if not self.check_host():
            raise web.HTTPError(403)
        # A header token is never sent by a browser on its own, so no XSRF or origin check.
        self.current_user = self._jupyter_current_user = user
        self._token_authenticated = True
        self._by_kernel_token = True
        self.set_cors_headers()

    @property
    def authorizer(self) -> Authorizer:
        """The server's Authorizer, or for the kernel token :class:`KernelTokenAuthorizer`."""
        if self._by_kernel_token:
            return self._kernel_authorizer
        return super().authorizer

    async def allowed(self, action: str, resource: str) -> bool:
        """Whether the Authorizer lets the current user do ``action`` on ``resource``: asked
        once per request (a chat's attachments and its run's permissions both need contents
        read; an Authorizer may be a round trip to JupyterHub)."""
        answers: dict[tuple[str, str], bool] = self.__dict__.setdefault("_resolve_allowed", {})
        if (action, resource) not in answers:
            user = self.current_user
            asked = self.authorizer.is_authorized(self, user, action, resource)
            answers[(action, resource)] = bool(await ensure_async(asked))
        return answers[(action, resource)]

    async def run_permissions(self) -> RunPermissions:
        """What a run this request starts may do beyond ``resolve``: the Authorizer's answers
        (JupyterHub's scopes through it) for ``contents`` read and write, ``kernels`` execute."""
        answers = {name: await self.allowed(*asked) for name, asked in ASKED.items()}
        return RunPermissions(**answers)

    def run_owner(self) -> str | None:
        """Who a run this request starts belongs to: the Jupyter identity's user name."""
        name = getattr(self.current_user, "username", None)
        return name if isinstance(name, str) and name else None

    async def joins_others(self, session_id: str | None) -> bool:
        """Whether a run naming ``session_id`` may join another person's session: the Authorizer
        lets the caller decide other people's runs (asked only when a session is named)."""
        return session_id is not None and await self.allowed("execute", OTHERS)

    async def viewer(self, deciding: bool = False) -> Viewer:
        """Who asks about runs, and what the Authorizer lets them do with other people's
        (DESIGN 10.2): ``read`` on ``resolve-others`` to see them; with ``deciding``, whether
        ``execute`` lets them cancel, approve or decide too."""
        sees = await self.allowed("read", OTHERS)
        decides = deciding and await self.allowed("execute", OTHERS)
        return Viewer(self.run_owner(), sees, decides)

    async def require(self, action: str, resource: str) -> None:
        """403 unless :meth:`allowed`: the second resource of a request, beside ``resolve``
        (checked by ``@authorized``)."""
        if not await self.allowed(action, resource):
            raise web.HTTPError(
                403, log_message=f"User is not authorized to {action} on resource: {resource}."
            )

    def service(self, name: str) -> Any:
        """The service the extension put in the settings as ``resolve_<name>`` (see
        ``Gateway.web_settings``); the handlers' typed properties read them through here."""
        return self.settings[f"resolve_{name}"]

    async def ensure_started(self) -> None:
        """Bring the gateway up (its internal listener, the runtime): a request as well as the
        server's start hook may be first."""
        await self.service("start")()

    @property
    def keepalive(self) -> float | None:
        """How often a quiet stream gets a keepalive comment (``c.Resolve.keepalive_interval``)."""
        interval: float | None = self.service("config").keepalive_interval
        return interval

    def note_decider(self, run_id: str, key: str) -> None:
        """The current user decides ``key`` (a tool call, a proposal) of ``run_id``: the audit
        event of the decision names them (audit/logger.py)."""
        audit = self.settings.get("resolve_audit")
        if audit is not None:
            audit.note_decider(run_id, key, self.current_user)

    def parse(self, model: type[ModelT]) -> ModelT:
        try:
            raw = loads(self.request.body or b"")
        except TooDeep as exc:
            raise BadRequest(f"body: JSON {exc}") from exc
        except ValueError as exc:
            raise BadRequest(f"body: not valid JSON ({exc})") from exc
        try:
            return model.model_validate(raw)
        except ValidationError as exc:
            raise BadRequest(validation_message(exc)) from exc

    def resume_after(self) -> int:
        """Where a client reattaching to a stream resumes: ``Last-Event-ID``, else ``?after=``
        (0: from the start); a 400 for anything but a whole number from 0."""
        value = self.request.headers.get("Last-Event-ID")
        if value is None:
            value = self.get_query_argument("after", None)
        if value is None or value == "":
            return 0
        try:
            after = int(value)
        except ValueError as exc:
            raise BadRequest(f"Last-Event-ID/after: not a whole number: {value!r}") from exc
        if after < 0:
            raise BadRequest("Last-Event-ID/after: must not be negative")
        return after

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        """A :class:`ResolveError` a handler raised: ``{"error": {"code", "message"}}`` with its
        status (the CORS headers of the request kept); any other error as jupyter_server's."""
        exc = raised(kwargs)
        if isinstance(exc, ResolveError):
            self.set_cors_headers()
            return write_resolve_error(self, exc)
        super().write_error(status_code, **kwargs)

    def answer(self, body: Any) -> None:
        self.finish(json.dumps(body))

    async def stream_run(self, run: EventSource, run_id: str, after: int = 0) -> None:
        """Stream a run's events from ``after`` as SSE; a client going away leaves the run be."""
        self.set_header("X-Resolve-Run-Id", run_id)
        await self.stream_events(run, after)

    async def stream_events(self, source: EventSource, after: int = 0) -> None:
        """Stream a run's or a task's events from ``after`` as SSE (:class:`LiveEvents`)."""
        await LiveEvents(self, source, after).run(self.keepalive)
