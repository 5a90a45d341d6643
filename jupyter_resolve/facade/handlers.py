"""``POST /resolve/v1/chat/completions``: the OpenAI-compatible facade (DESIGN 3.5).

Stateless like OpenAI's, unless the request names a session (``session_id`` in the body or an
``X-Resolve-Session`` header) and sends only the new user message: it then continues that
session's transcript (DESIGN 9.1). The answer names its session in ``X-Resolve-Session``.

Errors come in OpenAI's shape (``openai`` and the tools built on it read ``error.message``), for
our errors, tornado's and jupyter_server's alike; ``GET /resolve/v1/models`` lists the models
the facade offers; a catch-all answers any other ``/resolve/v1/`` path with a JSON 404, never
Jupyter's HTML page."""

from __future__ import annotations

import json
import time
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from tornado import web
from tornado.iostream import StreamClosedError

from ..contracts.bodies import ChatMessage, ChatRequest
from ..contracts.completions import CompletionShaper
from ..contracts.errors import ResolveError
from ..contracts.facade_models import FACADE_MODEL, choose, find_model, model_list, openai_error
from ..contracts.ids import Id, check_id
from ..handlers.base import ResolveHandler, authorized
from ..handlers.errors import raised
from ..handlers.streaming import SSEWriter
from ..runs.handlers import Launcher
from ..runs.request import RunRequest
from ..souls import Soul

STARTED = int(time.time())


class FacadeHandler(ResolveHandler):
    """Base of the facade's handlers: ``resolve`` read for GETs."""

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        exc = raised(kwargs)
        if isinstance(exc, ResolveError):
            status, message, code = exc.status, exc.message, str(exc.code)
        elif isinstance(exc, web.HTTPError):
            status, code = exc.status_code, None
            message = exc.log_message % exc.args if exc.log_message else (exc.reason or "")
            message = message or self._reason
        else:
            status, message, code = status_code, self._reason, None
        self.set_status(status)
        self.set_cors_headers()
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(openai_error(status, message, code)))

    @property
    def souls(self) -> dict[str, Soul]:
        souls: dict[str, Soul] = self.service("souls")
        return souls

    @property
    def created(self) -> int:
        """When the facade's models came to be: when this server started."""
        return STARTED


class ModelsHandler(FacadeHandler):
    """``GET /resolve/v1/models``: ``resolve`` and ``resolve/<soul>`` for each soul."""

    @web.authenticated
    @authorized("read")
    async def get(self) -> None:
        self.answer(model_list(self.souls, self.created))


class ModelHandler(FacadeHandler):
    """``GET /resolve/v1/models/{id}`` (the id may hold a ``/``: ``resolve/<soul>``)."""

    @web.authenticated
    @authorized("read")
    async def get(self, model_id: str) -> None:
        self.answer(find_model(model_id, self.souls, self.created))


class NotFoundHandler(FacadeHandler):
    """Any other ``/resolve/v1/`` path, with any method: a 404 in OpenAI's shape."""

    @web.authenticated
    @authorized("read")
    async def get(self, rest: str = "") -> None:
        raise web.HTTPError(404, f"no such endpoint: {self.request.method} {self.request.path}")

    post = put = patch = delete = get


catch_all: list[tuple[str, Any]] = [
    (r"/resolve/v1", NotFoundHandler),
    (r"/resolve/v1/(?P<rest>.*)", NotFoundHandler),
]
"""After every other ``/resolve/v1/`` route."""


def run_error(error: dict[str, Any] | None) -> dict[str, Any]:
    """A run that failed, as an OpenAI error body (type ``run_error``)."""
    error = error or {}
    body = openai_error(502, str(error.get("message", "the run failed")), error.get("code"))
    return {"error": {**body["error"], "type": "run_error"}}


class CompletionRequest(BaseModel):
    """The fields of an OpenAI chat-completions request the facade uses; others are ignored."""

    model_config = ConfigDict(extra="ignore")

    model: str = ""
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool = False
    stream_options: dict[str, Any] | None = None
    session_id: Id | None = None  # or the X-Resolve-Session header: continue that session


class CompletionsHandler(FacadeHandler):
    """Runs the agent like ``POST /resolve/api/chat``: ``resolve`` execute. The model
    ``resolve/<soul>`` selects that soul; the reply names the model asked for."""

    @web.authenticated
    @authorized("execute")
    async def post(self) -> None:
        body = self.parse(CompletionRequest)
        chosen = choose(body.model, self.souls)
        header = self.request.headers.get("X-Resolve-Session")
        session_id = body.session_id or (check_id("X-Resolve-Session", header) if header else None)
        await self.ensure_started()
        request = ChatRequest(
            messages=body.messages, model=chosen.model, soul=chosen.soul, session_id=session_id
        )
        permissions = await self.run_permissions()
        launcher: Launcher = self.service("launcher")
        others = await self.joins_others(session_id)
        run = launcher.start_run(
            RunRequest(request, owner=self.run_owner(), permissions=permissions, others=others)
        )
        shaper = CompletionShaper(run.run_id, body.model or FACADE_MODEL)
        self.set_header("X-Resolve-Run-Id", run.run_id)
        self.set_header("X-Resolve-Session", run.session_id)
        if not body.stream:
            async for event in run.watch():
                if event is not None:
                    shaper.feed(event)
            if shaper.failed():
                self.set_status(502)
                return self.answer(run_error(shaper.error))
            return self.answer(shaper.completion())
        include_usage = bool((body.stream_options or {}).get("include_usage"))
        sse = SSEWriter(self)
        sse.start()
        try:
            sse.data(shaper.first())
            await self.flush()
            async for event in run.watch(idle=self.keepalive):
                if event is None:
                    sse.keepalive()
                for chunk in shaper.feed(event) if event is not None else []:
                    sse.data(chunk)
                await self.flush()
            if shaper.failed():
                sse.data(run_error(shaper.error))
            elif include_usage:
                sse.data(shaper.usage_chunk())
            sse.data("[DONE]")
            await self.flush()
        except StreamClosedError:
            return
        sse.finish()


routes: list[tuple[str, Any]] = [
    (r"/resolve/v1/chat/completions", CompletionsHandler),
    (r"/resolve/v1/models", ModelsHandler),
    (r"/resolve/v1/models/(?P<model_id>.+)", ModelHandler),
    *catch_all,  # last: any other /resolve/v1/ path
]
