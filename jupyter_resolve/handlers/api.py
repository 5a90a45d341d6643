"""The public API under /resolve/api (DESIGN 3.5)."""

from __future__ import annotations

from typing import Any

from tornado import web

from ..errors import BadRequest, ResolveError
from ..models import ChatRequest
from .base import ResolveHandler


class ChatHandler(ResolveHandler):
    """``POST /resolve/api/chat`` → SSE of the new run's events."""

    @web.authenticated
    async def post(self) -> None:
        try:
            request = self.parse(ChatRequest)
            await self.gateway.start()
            run = self.gateway.start_chat(request)
        except ResolveError as exc:
            return self.fail(exc)
        await self.stream_run(run)


class RunsHandler(ResolveHandler):
    """``GET /resolve/api/runs[?session_id=]``."""

    @web.authenticated
    def get(self) -> None:
        session_id = self.get_query_argument("session_id", None)
        runs = self.gateway.runs.list(session_id)
        self.answer({"runs": [r.model_dump() for r in runs]})


class RunEventsHandler(ResolveHandler):
    """``GET /resolve/api/runs/{id}/events`` — reattach from ``Last-Event-ID`` or ``?after=``."""

    @web.authenticated
    async def get(self, run_id: str) -> None:
        try:
            run = self.gateway.runs.get(run_id)
            after = _after(
                self.request.headers.get("Last-Event-ID"), self.get_query_argument("after", None)
            )
        except ResolveError as exc:
            return self.fail(exc)
        await self.stream_run(run, after)


class RunCancelHandler(ResolveHandler):
    """``POST /resolve/api/runs/{id}/cancel``."""

    @web.authenticated
    async def post(self, run_id: str) -> None:
        try:
            run = await self.gateway.runs.cancel(run_id)
        except ResolveError as exc:
            return self.fail(exc)
        self.answer({"ok": True, "run": run.info().model_dump()})


class HealthHandler(ResolveHandler):
    """``GET /resolve/api/health``."""

    @web.authenticated
    async def get(self) -> None:
        await self.gateway.start()
        self.answer(self.gateway.health())


class ToolsHandler(ResolveHandler):
    """``GET /resolve/api/tools`` — the tools the agent can see."""

    @web.authenticated
    def get(self) -> None:
        self.answer({"tools": self.gateway.tool_specs()})


def _after(header: str | None, query: str | None) -> int:
    value = header if header is not None else query
    if value is None or value == "":
        return 0
    try:
        after = int(value)
    except ValueError as exc:
        raise BadRequest(f"Last-Event-ID/after: not a whole number: {value!r}") from exc
    if after < 0:
        raise BadRequest("Last-Event-ID/after: must not be negative")
    return after


RUN_ID = r"(?P<run_id>[A-Za-z0-9_.-]{1,128})"

routes: list[tuple[str, Any]] = [
    (r"/resolve/api/chat", ChatHandler),
    (r"/resolve/api/runs", RunsHandler),
    (rf"/resolve/api/runs/{RUN_ID}/events", RunEventsHandler),
    (rf"/resolve/api/runs/{RUN_ID}/cancel", RunCancelHandler),
    (r"/resolve/api/health", HealthHandler),
    (r"/resolve/api/tools", ToolsHandler),
]
