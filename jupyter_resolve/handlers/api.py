"""The public API under /resolve/api (DESIGN 3.5)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict
from tornado import web

from ..contracts.bodies import ChatRequest
from ..contracts.context import message_tokens
from ..contracts.errors import BadRequest
from ..contracts.ids import check_id, optional_id
from ..contracts.run_rows import Position, RunQuery, decode_cursor, page_limit
from ..notebook.tools import describe_mentions
from ..runs.approvals import decide
from ..runs.request import RunRequest
from ..runs.tasks import TaskRequest
from . import notebook
from .base import ResolveHandler, authorized


class ChatHandler(ResolveHandler):
    """``POST /resolve/api/chat`` → SSE of the new run's events."""

    @web.authenticated
    @authorized("execute")
    async def post(self) -> None:
        request = self.parse(ChatRequest)
        if request.attachments or request.notebook:
            await self.require("read", "contents")  # their bytes go into the session's context
            await self.check_visible(request)
        if any(m.description is None for m in request.mentions):
            await self.require("execute", "kernels")  # described in the notebook's kernel
            request = await describe_mentions(self.gateway, request)
        await self.gateway.start()
        permissions = await self.run_permissions()
        run = self.gateway.start_run(
            RunRequest(request, owner=self.run_owner(), permissions=permissions)
        )
        await self.stream_run(run)

    async def check_visible(self, request: ChatRequest) -> None:
        """A file the contents manager would not serve (hidden, ``hide_globs``) is not put
        into a session either: a 404 as ``/api/contents`` answers."""
        user = self.gateway.user_kernels
        if user is None:
            return
        for path in request.attachments:
            await user.check_visible(path, "attachments")
        if request.notebook:
            await user.check_visible(request.notebook, "notebook")


class RunsHandler(ResolveHandler):
    """``GET /resolve/api/runs[?session_id=&status=&before=&limit=]`` → ``{runs, next,
    indexing}``: a page of runs, newest first; ``next`` (null on the last page) is the
    ``before`` of the next page; ``indexing``: the index is being rebuilt from the logs."""

    @web.authenticated
    @authorized("read")
    def get(self) -> None:
        session_id = optional_id("session_id", self.get_query_argument("session_id", None))
        status = self.get_query_argument("status", None) or None
        if status not in (None, "running", "completed"):
            raise BadRequest(f"status: {status!r} is not 'running' or 'completed'")
        query = RunQuery(
            session_id=session_id, status=status, before=self._before(), limit=self._limit()
        )
        page = self.gateway.runs.page(query)
        runs = [r.model_dump() for r in page.runs]
        self.answer({"runs": runs, "next": page.next, "indexing": self._indexing()})

    def _indexing(self) -> bool:
        """True while the index is rebuilt from the logs (older runs may be missing)."""
        return not self.gateway.runs.index.reconciled.is_set()

    def _before(self) -> Position | None:
        before = self.get_query_argument("before", None)
        return decode_cursor(before) if before else None

    def _limit(self) -> int:
        return page_limit(self.get_query_argument("limit", None))


class SessionsHandler(RunsHandler):
    """``GET /resolve/api/sessions[?before=&limit=]`` → ``{sessions, next, indexing}``:
    sessions, the one with the newest run first (from the run index)."""

    @web.authenticated
    @authorized("read")
    def get(self) -> None:
        page = self.gateway.runs.sessions(self._before(), self._limit())
        sessions = [s.to_json() for s in page.sessions]
        self.answer({"sessions": sessions, "next": page.next, "indexing": self._indexing()})


class RunEventsHandler(ResolveHandler):
    """``GET /resolve/api/runs/{id}/events`` — reattach from ``Last-Event-ID`` or ``?after=``."""

    @web.authenticated
    @authorized("read")
    async def get(self, run_id: str) -> None:
        run = self.gateway.runs.get(check_id("run_id", run_id))
        after = _after(
            self.request.headers.get("Last-Event-ID"), self.get_query_argument("after", None)
        )
        await self.stream_run(run, after)


class RunCancelHandler(ResolveHandler):
    """``POST /resolve/api/runs/{id}/cancel``."""

    @web.authenticated
    @authorized("execute")
    async def post(self, run_id: str) -> None:
        run = await self.gateway.cancel_run(check_id("run_id", run_id))
        self.answer({"ok": True, "run": run.info().model_dump()})


class HealthHandler(ResolveHandler):
    """``GET /resolve/api/health``."""

    @web.authenticated
    @authorized("read")
    async def get(self) -> None:
        await self.gateway.start()
        await self.gateway.provider_health.ready(self.gateway.provider)
        self.answer(self.gateway.health())


class ModelsHandler(ResolveHandler):
    """``GET /resolve/api/models``: the models a client may pick (see Gateway.models)."""

    @web.authenticated
    @authorized("read")
    async def get(self) -> None:
        self.answer(await self.gateway.models())


class UsageHandler(ResolveHandler):
    """``GET /resolve/api/usage``: the user's own usage and budgets, from the organization's
    hub service (``c.Resolve.provider = "hub"``); nulls with any other provider."""

    @web.authenticated
    @authorized("read")
    async def get(self) -> None:
        from ..providers.hub import usage_of

        self.answer(await usage_of(self.gateway.provider))


class ToolsHandler(ResolveHandler):
    """``GET /resolve/api/tools`` — the tools the agent can see."""

    @web.authenticated
    @authorized("read")
    async def get(self) -> None:
        await self.gateway.start()  # MCP servers' tools are listed once they have started
        self.answer({"tools": self.gateway.tool_specs()})


class ApprovalRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    decision: Literal["approve", "deny"]
    # for good: an external agent's "allow always" / "reject always" (its own calls ask again)
    always: bool = False


class ApprovalHandler(ResolveHandler):
    """``POST /resolve/api/runs/{id}/approvals/{call_id}`` ``{"decision": approve|deny,
    "always"?: bool}``."""

    @web.authenticated
    @authorized("execute")
    def post(self, run_id: str, call_id: str) -> None:
        check_id("run_id", run_id)
        body = self.parse(ApprovalRequest)
        decision = body.decision
        self.note_decider(run_id, call_id)
        decide(self.gateway.runs.get(run_id), call_id, decision, body.always)
        self.answer({"ok": True, "run_id": run_id, "call_id": call_id, "decision": decision})


class SoulsHandler(ResolveHandler):
    """``GET /resolve/api/souls``."""

    @web.authenticated
    @authorized("read")
    def get(self) -> None:
        allowed = self.gateway.allowed_tools()
        souls = [
            {
                "name": s.name,
                "role": s.role,
                "description": s.description,
                "tools": s.tool_names(allowed),
                "rounds": s.rounds,
            }
            for s in sorted(self.gateway.souls.values(), key=lambda s: s.name)
        ]
        self.answer({"souls": souls})


class TasksHandler(ResolveHandler):
    """``POST /resolve/api/tasks`` → SSE of the task's events (every child's, tagged)."""

    @web.authenticated
    @authorized("execute")
    async def post(self) -> None:
        request = self.parse(TaskRequest)
        await self.gateway.start()
        task = self.gateway.tasks.start(
            request, await self.run_permissions(), owner=self.run_owner()
        )
        self.set_header("X-Resolve-Task-Id", task.task_id)
        await self.stream_events(task)


class TaskEventsHandler(ResolveHandler):
    """``GET /resolve/api/tasks/{id}/events`` (``Last-Event-ID`` or ``?after=``)."""

    @web.authenticated
    @authorized("read")
    async def get(self, task_id: str) -> None:
        task = self.gateway.tasks.get(check_id("task_id", task_id))
        after = _after(
            self.request.headers.get("Last-Event-ID"), self.get_query_argument("after", None)
        )
        await self.stream_events(task, after)


class TaskCancelHandler(ResolveHandler):
    """``POST /resolve/api/tasks/{id}/cancel``."""

    @web.authenticated
    @authorized("execute")
    async def post(self, task_id: str) -> None:
        task = await self.gateway.tasks.cancel(check_id("task_id", task_id))
        self.answer({"ok": True, "task_id": task.task_id})


class SessionTranscriptHandler(ResolveHandler):
    """``GET /resolve/api/sessions/{id}/transcript`` → the session's transcript as chat
    messages (what a chat continuing the session sends as history, before fitting)."""

    @web.authenticated
    @authorized("read")
    def get(self, session_id: str) -> None:
        check_id("session_id", session_id)
        history = self.gateway.transcripts.history(session_id)
        tokens = sum(message_tokens(m, history.ratio) for m in history.messages)
        self.answer(
            {"session_id": session_id, "messages": history.messages, "tokens_estimate": tokens}
        )


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


# Route arguments match any path segment, so a bad id is a 400 naming it (check_id), not a 404.
RUN_ID = r"(?P<run_id>[^/]+)"
TASK_ID = r"(?P<task_id>[^/]+)"
SESSION_ID = r"(?P<session_id>[^/]+)"

routes: list[tuple[str, Any]] = [
    (r"/resolve/api/chat", ChatHandler),
    (r"/resolve/api/runs", RunsHandler),
    (r"/resolve/api/sessions", SessionsHandler),
    (rf"/resolve/api/runs/{RUN_ID}/events", RunEventsHandler),
    (rf"/resolve/api/runs/{RUN_ID}/cancel", RunCancelHandler),
    (rf"/resolve/api/runs/{RUN_ID}/approvals/(?P<call_id>[^/]{{1,256}})", ApprovalHandler),
    (r"/resolve/api/souls", SoulsHandler),
    (r"/resolve/api/tasks", TasksHandler),
    (rf"/resolve/api/tasks/{TASK_ID}/events", TaskEventsHandler),
    (rf"/resolve/api/tasks/{TASK_ID}/cancel", TaskCancelHandler),
    (rf"/resolve/api/sessions/{SESSION_ID}/transcript", SessionTranscriptHandler),
    (r"/resolve/api/health", HealthHandler),
    (r"/resolve/api/tools", ToolsHandler),
    *notebook.routes,
    (r"/resolve/api/models", ModelsHandler),
    (r"/resolve/api/usage", UsageHandler),
]
