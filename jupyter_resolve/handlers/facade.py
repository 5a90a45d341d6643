"""``POST /resolve/v1/chat/completions``: the OpenAI-compatible facade (DESIGN 3.5).

Stateless like OpenAI's, unless the request names a session (``session_id`` in the body or an
``X-Resolve-Session`` header) and sends only the new user message: it then continues that
session's transcript (DESIGN 9.1). The answer names its session in ``X-Resolve-Session``."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from tornado import web
from tornado.iostream import StreamClosedError

from ..contracts.bodies import ChatMessage, ChatRequest
from ..contracts.completions import CompletionShaper
from ..contracts.facade_models import FACADE_MODEL, choose, openai_error
from ..contracts.ids import Id, check_id
from ..runs.request import RunRequest
from . import facade_base
from .base import authorized
from .facade_base import FacadeHandler
from .streaming import SSEWriter


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
        chosen = choose(body.model, self.gateway.souls)
        header = self.request.headers.get("X-Resolve-Session")
        session_id = body.session_id or (check_id("X-Resolve-Session", header) if header else None)
        await self.gateway.start()
        request = ChatRequest(
            messages=body.messages, model=chosen.model, soul=chosen.soul, session_id=session_id
        )
        permissions = await self.run_permissions()
        run = self.gateway.start_run(
            RunRequest(request, owner=self.run_owner(), permissions=permissions)
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
            async for event in run.watch(idle=self.gateway.config.keepalive_interval):
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
    *facade_base.routes,
    *facade_base.catch_all,  # last: any other /resolve/v1/ path
]

__all__ = ["CompletionsHandler", "routes"]
