"""The hub service's routes, under its prefix (``/services/<name>/``).

Every route but the prefix itself authenticates the caller by their hub token (an
``Authorization: token ...`` or ``Bearer ...`` header) through JupyterHub's ``HubAuth``: the
token must belong to a user and carry the service's access scope
(``access:services!service=<name>``). Errors are JSON ``{"error": {code, message, ...}}``.
"""

from __future__ import annotations

import html
import json
from datetime import datetime
from typing import Any, NoReturn

from tornado import web
from tornado.iostream import StreamClosedError

from .._version import __version__
from .forward import Upstream, UpstreamUnreachable, UsageWatch, Wire, relay
from .limits import Limits, decide, usage_view
from .service import Service


class ServiceHandler(web.RequestHandler):
    """Authenticated by the caller's hub token; ``self.user`` is their hub user model."""

    def initialize(self, service: Service) -> None:
        self.service = service
        self.user: dict[str, Any] = {}

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
        if model.get("kind", "user") != "user":
            self.fail(403, "forbidden", "only hub users may use this service")
        if auth.access_scopes and not auth.check_scopes(auth.access_scopes, model):
            needed = ", ".join(sorted(auth.access_scopes))
            self.fail(403, "forbidden", f"the token lacks the scope {needed}")
        self.user = model

    @property
    def name(self) -> str:
        return str(self.user["name"])

    def is_admin(self) -> bool:
        scope = self.service.config.admin_scope
        return bool(self.service.hub_auth.check_scopes({scope}, self.user))

    async def limits_of(self, user: dict[str, Any]) -> Limits:
        groups = await self.service.groups(user)
        return self.service.config.limits(str(user["name"]), groups)

    def usage_of(self, name: str, limits: Limits, now: datetime) -> dict[str, Any]:
        spent = self.service.store.spent(name, now)
        return {"user": name, **usage_view(limits, spent, now)}

    def answer(self, body: Any) -> None:
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(body))


class ForwardHandler(ServiceHandler):
    """``POST v1/chat/completions`` (OpenAI) and ``POST v1/messages`` (Anthropic)."""

    wire: Wire = "openai"

    async def post(self) -> None:
        body = self.body()
        limits = await self.limits_of(self.user)
        model = self.service.config.model_for(str(body.get("model") or ""), limits)
        body["model"] = model
        now = self.service.now()
        decision = decide(self.name, model, limits, self.service.store.spent(self.name, now), now)
        if not decision.allowed:
            self.refuse(decision.status, decision.body(), decision.resets_at, now)
        if self.wire == "openai" and body.get("stream") and self.service.config.stream_usage:
            options = body.get("stream_options")
            body["stream_options"] = {**(options if isinstance(options, dict) else {})}
            body["stream_options"]["include_usage"] = True
        await self.forward(self.service.config.upstream(self.wire), body, model)

    def body(self) -> dict[str, Any]:
        try:
            body = json.loads(self.request.body or b"null")
        except ValueError:
            body = None
        if not isinstance(body, dict):
            self.fail(400, "bad_request", "the body must be a JSON object")
        return {str(k): v for k, v in body.items()}

    def refuse(self, status: int, body: dict[str, Any], resets: str | None, now: datetime) -> None:
        if resets:
            wait = datetime.fromisoformat(resets.replace("Z", "+00:00")) - now
            self.set_header("Retry-After", str(max(1, int(wait.total_seconds()))))
        self.set_status(status)
        self.answer(body)
        raise web.Finish()

    async def forward(self, upstream: Upstream, body: dict[str, Any], model: str) -> None:
        watch = UsageWatch(self.wire)
        started = False

        def start(status: int, content_type: str) -> None:
            nonlocal started
            started = True
            self.set_status(status)
            self.set_header("Content-Type", content_type)
            if "text/event-stream" in content_type:
                self.set_header("Cache-Control", "no-cache")
                self.set_header("X-Accel-Buffering", "no")

        async def write(piece: bytes) -> None:
            self.write(piece)
            await self.flush()

        headers = {k.lower(): v for k, v in self.request.headers.items()}
        try:
            await relay(
                self.service.client, upstream, body, headers, start=start, write=write, watch=watch
            )
        except UpstreamUnreachable as exc:
            if not started:
                self.fail(502, "upstream_unreachable", str(exc))
            self.service.log.warning("%s (user %s)", exc, self.name)
        except StreamClosedError:
            pass  # the caller went away; what the upstream sent until then is counted
        finally:
            self.record(model, watch)
        if not self._finished:
            self.finish()

    def record(self, model: str, watch: UsageWatch) -> None:
        used = watch.used()
        if not used.tokens:
            return
        cost = self.service.config.cost(model, used)
        counted = type(used)(used.prompt_tokens, used.completion_tokens, cost)
        self.service.store.record(self.name, model, counted, self.service.now())


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
        except Exception as exc:  # any failure of the upstream: an empty list, logged
            self.service.log.warning("model list from the upstream failed: %s", type(exc).__name__)
            self.answer({"object": "list", "data": []})
            return
        self.set_status(got.status_code)
        self.answer(got.json() if got.status_code == 200 else {"object": "list", "data": []})


class UsageHandler(ServiceHandler):
    """``GET usage[?user=NAME]``: the caller's own usage; another's only for an admin."""

    async def get(self) -> None:
        name = self.get_query_argument("user", self.name)
        if name != self.name and not self.is_admin():
            self.fail(403, "forbidden", "you can read your own usage only")
        target = self.user if name == self.name else {"name": name}
        now = self.service.now()
        self.answer(self.usage_of(name, await self.limits_of(target), now))


class AdminUsageHandler(ServiceHandler):
    """``GET admin/usage``: every user's usage this month (admins only)."""

    async def rows(self) -> list[dict[str, Any]]:
        if not self.is_admin():
            self.fail(403, "forbidden", f"{self.service.config.admin_scope} is needed")
        now = self.service.now()
        names = set(self.service.store.spent_by_user(now)) | set(self.service.config.user_limits)
        return [
            self.usage_of(name, await self.limits_of({"name": name}), now) for name in sorted(names)
        ]

    async def get(self) -> None:
        self.answer({"users": await self.rows()})


class AdminPageHandler(AdminUsageHandler):
    """``GET admin``: the same as a page (token-authenticated, like the JSON)."""

    async def get(self) -> None:
        rows = await self.rows()

        def cell(period: dict[str, Any]) -> str:
            limit = period["limit_tokens"]
            cost = f"${period['cost']:.4f}"
            return f"{period['tokens']} / {limit if limit is not None else '∞'} tokens, {cost}"

        body = "".join(
            f"<tr><td>{html.escape(r['user'])}</td><td>{html.escape(cell(r['day']))}</td>"
            f"<td>{html.escape(cell(r['month']))}</td></tr>"
            for r in rows
        )
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.finish(
            "<!doctype html><title>jupyter-resolve usage</title><h1>Usage</h1>"
            "<table><tr><th>user</th><th>today</th><th>this month</th></tr>"
            f"{body}</table>"
        )


class InfoHandler(web.RequestHandler):
    """The prefix itself: what this is (no authentication, nothing about anyone)."""

    def get(self) -> None:
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps({"service": "jupyter-resolve-hub", "version": __version__}))


def make_app(service: Service) -> web.Application:
    prefix = service.config.prefix
    args = {"service": service}
    return web.Application(
        [
            (prefix, InfoHandler),
            (f"{prefix}v1/chat/completions", ForwardHandler, args),
            (f"{prefix}v1/messages", MessagesHandler, args),
            (f"{prefix}v1/models", ModelsHandler, args),
            (f"{prefix}usage", UsageHandler, args),
            (f"{prefix}admin/usage", AdminUsageHandler, args),
            (f"{prefix}admin", AdminPageHandler, args),
        ]
    )
