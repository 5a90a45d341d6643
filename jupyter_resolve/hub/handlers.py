"""The hub service's routes, under its prefix (``/services/<name>/``).

Every route but the prefix itself and ``health`` authenticates the caller by their hub token (an
``Authorization: token ...`` or ``Bearer ...`` header) through JupyterHub's ``HubAuth`` before
any of the body is read (a refused caller's body is never read: the connection closes): the
token must belong to a user and carry the service's access scope
(``access:services!service=<name>``). Bodies over ``max_body_size`` are refused (413), JSON is
parsed with the project's depth limit, and NaN or Infinity are refused (400). Errors are JSON
``{"error": {code, message, ...}}``. The admin's routes are in :mod:`.admin`.
"""

from __future__ import annotations

import json
import logging
from datetime import datetime
from typing import Any, NoReturn

from tornado import web
from tornado.http1connection import HTTP1Connection
from tornado.iostream import StreamClosedError

from .._version import __version__
from ..contracts.errors import BadRequest
from ..contracts.safejson import loads
from .budgets import Held, Refusal, Used
from .forward import Relayed, UsageWatch, Wire, relay
from .limits import Decision, Limits, Spent, decide, too_many, unpriced, usage_view
from .opening import UpstreamUnreachable
from .service import Service
from .worst_case import completion_limit, prompt_estimate


def parse_body(raw: bytes) -> dict[str, Any]:
    """A request body as a JSON object: nested at most 64 deep, no NaN or Infinity."""
    try:
        body = loads(bytes(raw) or b"null", allow_nan=False)
    except ValueError as exc:  # not JSON, too deep, NaN
        raise BadRequest(f"the body is not usable JSON: {exc}") from None
    if not isinstance(body, dict):
        raise BadRequest("the body must be a JSON object")
    return {str(k): v for k, v in body.items()}


@web.stream_request_body
class ServiceHandler(web.RequestHandler):
    """Authenticated by the caller's hub token; ``self.user`` is their hub user model."""

    def initialize(self, service: Service) -> None:
        self.service = service
        self.user: dict[str, Any] = {}
        self.raw = bytearray()
        self.noted: dict[str, Any] = {}  # model and tokens, for the request's log line

    def fail(self, status: int, code: str, message: str, **extra: Any) -> NoReturn:
        self.set_status(status)
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps({"error": {"code": code, "message": message, **extra}}))
        raise web.Finish()

    async def prepare(self) -> None:
        auth = self.service.hub_auth
        token = auth.get_token(self, in_cookie=False)
        model = await auth.user_for_token(token, sync=False) if token else None
        if not model:
            self.fail(401, "unauthorized", "send your JupyterHub API token: Authorization: token …")
        self.noted["user"] = str(model.get("name", "-"))
        if model.get("kind", "user") != "user":
            self.fail(403, "forbidden", "only hub users may use this service")
        if not auth.check_scopes(auth.access_scopes, model):
            needed = ", ".join(sorted(auth.access_scopes))
            self.fail(403, "forbidden", f"the token lacks the scope {needed}")
        self.user = model
        limit = self.service.config.max_body_size
        declared = self.request.headers.get("Content-Length", "")
        if declared.isdigit() and int(declared) > limit:
            self.fail(413, "too_large", f"the body is over this service's limit of {limit} bytes")
        if isinstance(self.request.connection, HTTP1Connection):
            self.request.connection.set_max_body_size(limit)

    def data_received(self, chunk: bytes) -> None:
        self.raw += chunk

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps({"error": {"code": "error", "message": self._reason}}))

    @property
    def name(self) -> str:
        return str(self.user["name"])

    def is_admin(self) -> bool:
        scope = self.service.config.admin_scope
        return bool(self.service.hub_auth.check_scopes({scope}, self.user))

    async def limits_of(self, user: dict[str, Any]) -> Limits:
        groups = await self.service.groups(user)
        return self.service.config.limits(str(user["name"]), groups)

    async def usage_of(self, name: str, limits: Limits, now: datetime) -> dict[str, Any]:
        spent = await self.service.db(self.service.store.spent, name, now)
        return {"user": name, **usage_view(limits, spent, now)}

    def answer(self, body: Any) -> None:
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(body))


class ForwardHandler(ServiceHandler):
    """``POST v1/chat/completions`` and ``POST v1/completions`` (OpenAI), ``POST v1/messages``
    (Anthropic): admitted against the user's models, budgets and requests in flight, then
    forwarded; the worst case is reserved before and settled to the reported usage after."""

    wire: Wire = "openai"
    path = "/chat/completions"

    async def post(self) -> None:
        try:
            body = parse_body(bytes(self.raw))
        except BadRequest as exc:
            self.fail(400, exc.code, exc.message)
        size, self.raw = len(self.raw), bytearray()  # the parsed body is what is kept
        config = self.service.config
        limits = await self.limits_of(self.user)
        model = config.model_for(str(body.get("model") or ""), limits)
        body["model"] = self.noted["model"] = model
        now = self.service.now()
        decision = decide(self.name, model, limits, Spent(), now)
        if decision.allowed and limits.cost_only and config.price(model) is None:
            decision = unpriced(self.name, model)
        if not decision.allowed:
            self.refuse(decision, now)
        if self.wire == "openai" and body.get("stream") and config.stream_usage:
            options = body.get("stream_options")
            body["stream_options"] = {**(options if isinstance(options, dict) else {})}
            body["stream_options"]["include_usage"] = True
        held = await self.reserve(body, size, model, limits, now)
        await self.forward(body, held)

    async def reserve(
        self, body: dict[str, Any], size: int, model: str, limits: Limits, now: datetime
    ) -> Held:
        config = self.service.config
        prompt = prompt_estimate(size)
        completion = completion_limit(body, config.reserve_max_tokens)
        worst = Used(prompt, completion, config.cost(model, Used(prompt, completion)))
        store = self.service.store
        cap = config.max_concurrent
        held = await self.service.db(store.reserve, self.name, model, worst, limits, cap, now)
        if isinstance(held, Refusal):
            if held.reason == "concurrency":
                self.set_header("Retry-After", "1")
                self.refuse(too_many(self.name, cap), now)
            refused = decide(self.name, model, limits, held.spent, now)
            self.refuse(refused if not refused.allowed else too_many(self.name, cap), now)
        return held

    def refuse(self, decision: Decision, now: datetime) -> NoReturn:
        if decision.resets_at:
            wait = datetime.fromisoformat(decision.resets_at.replace("Z", "+00:00")) - now
            self.set_header("Retry-After", str(max(1, int(wait.total_seconds()))))
        self.set_status(decision.status)
        self.answer(decision.body())
        raise web.Finish()

    async def forward(self, body: dict[str, Any], held: Held) -> None:
        watch = UsageWatch(self.wire)
        config = self.service.config
        relayed = Relayed(0, finished=False)

        def start(status: int, content_type: str) -> None:
            relayed.status = status
            self.set_status(status)
            self.set_header("Content-Type", content_type)
            if "text/event-stream" in content_type:
                self.set_header("Cache-Control", "no-cache")
                self.set_header("X-Accel-Buffering", "no")

        async def write(piece: bytes) -> bool:
            try:
                self.write(piece)
                await self.flush()
            except StreamClosedError:
                return False
            return True

        headers = {k.lower(): v for k, v in self.request.headers.items()}
        try:
            try:
                relayed = await relay(
                    (self.service.client, self.service.raw_pool),
                    config.upstream(self.wire),
                    (self.path, body),
                    headers,
                    start=start,
                    write=write,
                    watch=watch,
                    hangup_timeout=config.hangup_read_timeout,
                    keepalive=config.keepalive_interval,
                )
            except UpstreamUnreachable as exc:
                self.service.log.warning("%s (user %s)", exc.message, self.name)
                if not relayed.status:
                    self.fail(502, exc.code, exc.message)
                await write(stream_error(self.wire, exc))
        finally:  # whatever happened, the reservation is settled, once
            await self.settle(held, self.charge(held, watch, relayed))
        if not self._finished:
            self.finish()

    def charge(self, held: Held, watch: UsageWatch, relayed: Relayed) -> Used:
        """What the request costs: the upstream's reported usage; the reservation when the
        client hung up and the usage never came."""
        used = watch.used()
        if relayed.client_gone and (not relayed.finished or not used.tokens):
            return held.worst
        cost = self.service.config.cost(held.model, used)
        return Used(used.prompt_tokens, used.completion_tokens, cost)

    async def settle(self, held: Held, used: Used) -> None:
        if self.noted.get("settled"):
            return
        self.noted["settled"] = True
        self.noted["tokens"] = used.tokens
        try:
            await self.service.db(self.service.store.settle, held, used)
        except Exception as exc:  # the reservation stays; it expires and is charged in full
            self.service.log.error("could not settle %s's request: %s", self.name, exc)

    def on_connection_close(self) -> None:
        self.noted.setdefault("hung_up", True)


def stream_error(wire: Wire, exc: UpstreamUnreachable) -> bytes:
    """An error said inside a stream that already started, as each wire's clients read one."""
    error = {"code": exc.code, "message": exc.message}
    if wire == "anthropic":
        data = json.dumps({"type": "error", "error": {"type": "api_error", **error}})
        return f"event: error\ndata: {data}\n\n".encode()
    return f"data: {json.dumps({'error': error})}\n\n".encode()


class CompletionsHandler(ForwardHandler):
    path = "/completions"


class MessagesHandler(ForwardHandler):
    wire: Wire = "anthropic"


class ModelsHandler(ServiceHandler):
    """``GET v1/models``: the models this user may use (all: the upstream's list)."""

    async def get(self) -> None:
        limits = await self.limits_of(self.user)
        if limits.models is not None and "*" not in limits.models:
            data = [{"id": m, "object": "model"} for m in sorted(limits.models)]
            self.answer({"object": "list", "data": data})
            return
        upstream = self.service.config.upstream("openai")
        try:
            got = await self.service.client.get(upstream.models_url(), headers=upstream.headers({}))
            listing = got.json() if got.status_code == 200 else None
        except Exception as exc:  # any failure of the upstream: an empty list, logged
            self.service.log.warning("model list from the upstream failed: %s", type(exc).__name__)
            listing = None
        self.answer(listing if isinstance(listing, dict) else {"object": "list", "data": []})


class UsageHandler(ServiceHandler):
    """``GET usage[?user=NAME]``: the caller's own usage; another's only for an admin."""

    async def get(self) -> None:
        name = self.get_query_argument("user", self.name)
        if name != self.name and not self.is_admin():
            self.fail(403, "forbidden", "you can read your own usage only")
        target = self.user if name == self.name else {"name": name}
        now = self.service.now()
        self.answer(await self.usage_of(name, await self.limits_of(target), now))


class InfoHandler(web.RequestHandler):
    """The prefix itself: what this is (no authentication, nothing about anyone)."""

    def get(self) -> None:
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps({"service": "jupyter-resolve-hub", "version": __version__}))


class HealthHandler(web.RequestHandler):
    """``GET health``: readiness (200 when the database and every upstream in use answer, else
    503); ``GET health/live``: liveness (200 while the process serves). No authentication and
    nothing about anyone, so probes can ask."""

    def initialize(self, service: Service, live: bool = False) -> None:
        self.service = service
        self.live = live

    async def get(self) -> None:
        self.set_header("Content-Type", "application/json")
        self.set_header("Cache-Control", "no-store")
        if self.live:
            self.finish(json.dumps({"ok": True, "version": __version__}))
            return
        problem = await self.service.database_ok()
        upstreams = {}
        for wire in self.service.config.upstreams_in_use():
            base = self.service.config.upstream(wire).base_url
            upstreams[wire] = {"reachable": await self.service.upstream_ok(base)}
        ok = problem is None and all(u["reachable"] for u in upstreams.values())
        database = {"ok": problem is None, **({"error": problem} if problem else {})}
        body = {"ok": ok, "version": __version__, "database": database, "upstreams": upstreams}
        self.set_status(200 if ok else 503)
        self.finish(json.dumps(body))


def log_request(handler: web.RequestHandler) -> None:
    """One line per request: time, user, model, status, tokens, milliseconds (the health
    probes' answers only at debug)."""
    request = handler.request
    status = handler.get_status()
    noted = getattr(handler, "noted", {})
    log = logging.getLogger("jupyter_resolve.hub")
    level = logging.DEBUG if isinstance(handler, HealthHandler) and status == 200 else logging.INFO
    if not log.isEnabledFor(level):
        return
    log.log(
        level,
        "user=%s model=%s status=%d tokens=%s ms=%.1f %s %s%s",
        noted.get("user", "-"),
        noted.get("model", "-"),
        status,
        noted.get("tokens", 0),
        1000.0 * request.request_time(),
        request.method,
        request.path,
        " client-hung-up" if noted.get("hung_up") else "",
    )
