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
from ..contracts.ids import Id, check_id
from .base import ResolveHandler, authorized
from .streaming import SSEWriter

DEFAULT_MODEL_NAMES = ("", "resolve", "default")


class CompletionRequest(BaseModel):
    """The fields of an OpenAI chat-completions request the facade uses; others are ignored."""

    model_config = ConfigDict(extra="ignore")

    model: str = ""
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool = False
    stream_options: dict[str, Any] | None = None
    session_id: Id | None = None  # or the X-Resolve-Session header: continue that session


class CompletionsHandler(ResolveHandler):
    """Runs the agent like ``POST /resolve/api/chat``: ``resolve`` execute."""

    @web.authenticated
    @authorized("execute")
    async def post(self) -> None:
        body = self.parse(CompletionRequest)
        model = None if body.model in DEFAULT_MODEL_NAMES else body.model
        header = self.request.headers.get("X-Resolve-Session")
        session_id = body.session_id or (check_id("X-Resolve-Session", header) if header else None)
        await self.gateway.start()
        request = ChatRequest(messages=body.messages, model=model, session_id=session_id)
        run = self.gateway.start_chat(request)
        shaper = CompletionShaper(run.run_id, run.model)
        self.set_header("X-Resolve-Run-Id", run.run_id)
        self.set_header("X-Resolve-Session", run.session_id)
        if not body.stream:
            async for event in run.watch():
                if event is not None:
                    shaper.feed(event)
            if shaper.failed():
                self.set_status(502)
                return self.answer({"error": {**(shaper.error or {}), "type": "run_error"}})
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
                sse.data({"error": {**(shaper.error or {}), "type": "run_error"}})
            elif include_usage:
                sse.data(shaper.usage_chunk())
            sse.data("[DONE]")
            await self.flush()
        except StreamClosedError:
            return
        sse.finish()


routes: list[tuple[str, Any]] = [(r"/resolve/v1/chat/completions", CompletionsHandler)]

__all__ = ["CompletionsHandler", "routes"]
