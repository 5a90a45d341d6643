"""``POST /resolve/api/completion``: inline completion through the gateway (issue 35, DESIGN
10.3). Not a run (no log, no agent); the key, the model lock and usage accounting apply.

A newer request for the same (user, cell) cancels the older one, and a client that goes away
cancels its own: the task awaiting the provider is cancelled, which closes its connection. One
person has at most ``c.Resolve.completion_max_concurrent`` requests in flight (429
``too_many_completions`` beyond, with ``Retry-After``)."""

from __future__ import annotations

import asyncio
import time

from tornado import web

from ..config import Resolve
from ..contracts.completion import CompletionRequest, bound, on_magic_line, style_for
from ..contracts.errors import ResolveError
from ..contracts.models import choose_model
from ..contracts.sse import format_event
from ..handlers.base import ResolveHandler, authorized
from ..providers.base import Provider
from ..providers.completion import Completion, complete
from ..providers.prices import load_prices
from .service import CompletionState, Usage


class Replaced(ResolveError):
    """The answer to a request a newer one for the same cell cancelled."""

    status = 409
    code = "cancelled"


class CompletionAPIHandler(ResolveHandler):
    """Base: the settings, the provider and the completion state of this server."""

    @property
    def resolve_config(self) -> Resolve:
        config: Resolve = self.service("config")
        return config

    @property
    def provider(self) -> Provider:
        provider: Provider = self.service("provider")()  # read now: a test may swap it
        return provider

    @property
    def state(self) -> CompletionState:
        state: CompletionState = self.settings.setdefault("resolve_completion", CompletionState())
        if state.prices is None:
            state.prices = load_prices(self.resolve_config.prices)
        return state


class CompletionHandler(CompletionAPIHandler):
    """``{items: [{insertText}], model, ms}``, or with ``stream`` SSE ``completion.delta``
    {text} then ``completion.done`` {model, ms, usage}."""

    _task: asyncio.Task[Completion] | None = None
    _seq = 0  # SSE frames sent
    _replaced = False  # a newer request for its cell took its place

    def user_name(self) -> str:
        user = self.current_user
        return str(getattr(user, "username", None) or getattr(user, "name", None) or user)

    @web.authenticated
    @authorized("execute")
    async def post(self) -> None:
        started = time.perf_counter()
        request = self.parse(CompletionRequest)
        config = self.resolve_config
        configured = config.completion_model or config.resolved_model()
        model = choose_model(request.model or configured, config.allowed_models, configured)
        prefix, suffix = bound(
            request.prefix,
            request.suffix,
            config.completion_max_prefix,
            config.completion_max_suffix,
        )
        if on_magic_line(prefix, suffix):
            return self._answer([], model, started, {}, request.stream)
        style = style_for(model, config.completion_style)
        user = self.user_name()
        key = (user, request.cell_id) if request.cell_id else None
        on_text = self._delta if request.stream else None
        provider = self.provider
        self.state.admit(user, key, config.completion_max_concurrent)  # 429 beyond the cap
        coro = complete(provider, style, model, prefix, suffix, request.language, on_text)
        task = asyncio.ensure_future(coro)
        self._task = task
        self.state.start(user, key, task)
        try:
            completion = await task
        except asyncio.CancelledError:
            self.state.of(user).cancelled += 1
            if not self.request.connection or self._finished:
                return None
            self._replaced = True
            return self._fail(Replaced("a newer completion request for this cell replaced it"))
        except ResolveError as exc:
            return self._fail(exc)
        finally:
            self.state.end(user, key, task)
            self._task = None
        self.state.of(user).add(model, completion.usage, self.state.prices or {})
        items = [completion.text] if completion.text else []
        return self._answer(items, model, started, completion.usage, request.stream)

    def _delta(self, text: str) -> None:
        """One streamed piece of the suggestion (the SSE headers go with the first)."""
        if self._seq == 0:
            self.set_header("Content-Type", "text/event-stream")
            self.set_header("Cache-Control", "no-cache")
        self._seq += 1
        self.write(format_event(self._seq, "completion.delta", {"text": text}))
        self.flush()

    def _fail(self, exc: ResolveError) -> None:
        """Before any delta: the JSON error with its status; after: a ``completion.error``."""
        if self._seq == 0:
            raise exc
        self._seq += 1
        error = {"code": exc.code, "message": exc.message}
        self.finish(format_event(self._seq, "completion.error", error))

    def _answer(
        self, items: list[str], model: str, started: float, usage: dict[str, int], stream: bool
    ) -> None:
        ms = round((time.perf_counter() - started) * 1000, 2)
        if not stream:
            body = {"items": [{"insertText": text} for text in items], "model": model, "ms": ms}
            return self.answer(body)
        if self._seq == 0:  # not streamed from the provider: the whole suggestion in one piece
            for text in items:
                self._delta(text)
        if self._seq == 0:
            self.set_header("Content-Type", "text/event-stream")
        done = {"model": model, "ms": ms, "usage": usage or None}
        self.finish(format_event(self._seq + 1, "completion.done", done))
        return None

    def _log(self) -> None:
        """The request's log line (tornado's hook for it). A request a newer one for its cell
        replaced is routine, the person typed on: its 409 is a debug line, not the WARNING
        jupyter_server gives every 4xx."""
        if not self._replaced:
            return super()._log()
        ms = 1000 * self.request.request_time()
        self.log.debug(
            "%d %s %s %.2fms (replaced by a newer request for its cell)",
            self.get_status(),
            self.request.method,
            self.request.path,
            ms,
        )
        return None

    def on_connection_close(self) -> None:
        """The client went away: abort its provider request."""
        if self._task is not None and not self._task.done():
            self._task.cancel()
        super().on_connection_close()


class CompletionUsageHandler(CompletionAPIHandler):
    """``GET /resolve/api/completion/usage`` → the current user's completion usage."""

    @web.authenticated
    @authorized("read")
    def get(self) -> None:
        state = self.state
        user = self.current_user
        name = str(getattr(user, "username", None) or getattr(user, "name", None) or user)
        usage = state.usage.get(name) or Usage()
        self.answer({"user": name, **usage.__dict__, "cost": round(usage.cost, 6)})
