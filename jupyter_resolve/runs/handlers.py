"""Runs over the public API (DESIGN 3.5, 3.6): a chat starts one, a task a chain of them;
runs and sessions are listed, watched, cancelled, their calls approved, their transcripts read.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol, cast

from pydantic import BaseModel, ConfigDict
from tornado import web

from ..contracts.bodies import ChatRequest
from ..contracts.context import message_tokens
from ..contracts.errors import BadRequest
from ..contracts.ids import check_id, optional_id
from ..contracts.ownership import session_owner
from ..contracts.run_rows import Position, RunQuery, decode_cursor, page_limit
from ..contracts.steering import SteerRequest
from ..handlers.base import ResolveHandler, authorized
from ..notebook.kernels import UserKernels
from ..notebook.tools import NotebookHost, describe_mentions
from .approvals import decide
from .manager import RunManager
from .request import RunRequest
from .run import Run
from .steering import steer
from .tasks import Task, TaskManager, TaskRequest
from .transcript import SessionTranscripts, refuse_other_session


class Launcher(Protocol):
    """Starts and cancels runs whatever drives them (the agent, or an external agent)."""

    def start_run(self, request: RunRequest) -> Run: ...

    async def cancel_run(self, run_id: str) -> Run: ...


class RunsAPIHandler(ResolveHandler):
    """Base of the runs' handlers: the services they use."""

    @property
    def runs(self) -> RunManager:
        return cast("RunManager", self.service("runs"))

    @property
    def tasks(self) -> TaskManager:
        return cast("TaskManager", self.service("tasks"))

    @property
    def launcher(self) -> Launcher:
        return cast("Launcher", self.service("launcher"))

    async def seen_run(self, run_id: str, deciding: bool = False) -> Run:
        """The run, if this person may see it (DESIGN 10.2), else a 404 as for a run that is
        not there; ``deciding``: also may cancel or decide for it, else a 403."""
        run = self.runs.get(check_id("run_id", run_id))
        (await self.viewer(deciding)).check(run.owner, f"run '{run_id}'", deciding)
        return run

    async def seen_task(self, task_id: str, deciding: bool = False) -> Task:
        task = self.tasks.get(check_id("task_id", task_id))
        (await self.viewer(deciding)).check(task.owner, f"task '{task_id}'", deciding)
        return task


class ChatHandler(RunsAPIHandler):
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
            notebook: NotebookHost = self.service("notebook")
            request = await describe_mentions(notebook, request)
        await self.ensure_started()
        permissions = await self.run_permissions()
        others = await self.joins_others(request.session_id)
        run = self.launcher.start_run(
            RunRequest(request, owner=self.run_owner(), permissions=permissions, others=others)
        )
        await self.stream_run(run, run.run_id)

    async def check_visible(self, request: ChatRequest) -> None:
        """A file the contents manager would not serve (hidden, ``hide_globs``) is not put
        into a session either: a 404 as ``/api/contents`` answers."""
        user: UserKernels | None = self.service("user_kernels")
        if user is None:
            return
        for path in request.attachments:
            await user.check_visible(path, "attachments")
        if request.notebook:
            await user.check_visible(request.notebook, "notebook")


class RunsHandler(RunsAPIHandler):
    """``GET /resolve/api/runs[?session_id=&status=&before=&limit=]`` → ``{runs, next,
    indexing}``: a page of runs, newest first; ``next`` (null on the last page) is the
    ``before`` of the next page; ``indexing``: the index is being rebuilt from the logs."""

    @web.authenticated
    @authorized("read")
    async def get(self) -> None:
        session_id = optional_id("session_id", self.get_query_argument("session_id", None))
        status = self.get_query_argument("status", None) or None
        if status not in (None, "running", "completed"):
            raise BadRequest(f"status: {status!r} is not 'running' or 'completed'")
        viewer = await self.viewer()
        query = RunQuery(
            session_id=session_id,
            status=status,
            owners=viewer.owners(),
            before=self._before(),
            limit=self._limit(),
        )
        page = self.runs.page(query)
        runs = [r.model_dump() for r in page.runs]
        self.answer({"runs": runs, "next": page.next, "indexing": self._indexing()})

    def _indexing(self) -> bool:
        """True while the index is rebuilt from the logs (older runs may be missing)."""
        return not self.runs.index.reconciled.is_set()

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
    async def get(self) -> None:
        owners = (await self.viewer()).owners()
        page = self.runs.sessions(self._before(), self._limit(), owners)
        sessions = [s.to_json() for s in page.sessions]
        self.answer({"sessions": sessions, "next": page.next, "indexing": self._indexing()})


class RunEventsHandler(RunsAPIHandler):
    """``GET /resolve/api/runs/{id}/events`` — reattach from ``Last-Event-ID`` or ``?after=``."""

    @web.authenticated
    @authorized("read")
    async def get(self, run_id: str) -> None:
        run = await self.seen_run(run_id)
        await self.stream_run(run, run.run_id, self.resume_after())


class RunCancelHandler(RunsAPIHandler):
    """``POST /resolve/api/runs/{id}/cancel``."""

    @web.authenticated
    @authorized("execute")
    async def post(self, run_id: str) -> None:
        await self.seen_run(run_id, deciding=True)
        run = await self.launcher.cancel_run(run_id)
        self.answer({"ok": True, "run": run.info().model_dump()})


class RunMessagesHandler(RunsAPIHandler):
    """``POST /resolve/api/runs/{id}/messages`` ``{"text"}``: steer a running run (the owner's,
    as cancel is): 202 ``{id, run_id, status: "queued"}``; delivered at its next round
    boundary, where its ``run.message`` is logged (runs/steering.py)."""

    @web.authenticated
    @authorized("execute")
    async def post(self, run_id: str) -> None:
        run = await self.seen_run(run_id, deciding=True)
        body = self.parse(SteerRequest)
        self.set_status(202)
        self.answer(await steer(self.runs, run, body.text))


class TaskMessagesHandler(RunsAPIHandler):
    """``POST /resolve/api/tasks/{id}/messages`` ``{"text"}``: steer the task's step that is
    running (DESIGN 4)."""

    @web.authenticated
    @authorized("execute")
    async def post(self, task_id: str) -> None:
        task = await self.seen_task(task_id, deciding=True)
        body = self.parse(SteerRequest)
        self.set_status(202)
        self.answer({**await steer(self.runs, task.running_step(), body.text), "task_id": task_id})


class ApprovalRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    decision: Literal["approve", "deny"]
    # for good: an external agent's "allow always" / "reject always" (its own calls ask again)
    always: bool = False


class ApprovalHandler(RunsAPIHandler):
    """``POST /resolve/api/runs/{id}/approvals/{call_id}`` ``{"decision": approve|deny,
    "always"?: bool}``."""

    @web.authenticated
    @authorized("execute")
    async def post(self, run_id: str, call_id: str) -> None:
        body = self.parse(ApprovalRequest)
        run = await self.seen_run(run_id, deciding=True)
        decision = body.decision
        self.note_decider(run_id, call_id)
        decide(run, call_id, decision, body.always)
        self.answer({"ok": True, "run_id": run_id, "call_id": call_id, "decision": decision})


class TasksHandler(RunsAPIHandler):
    """``POST /resolve/api/tasks`` → SSE of the task's events (every child's, tagged)."""

    @web.authenticated
    @authorized("execute")
    async def post(self) -> None:
        request = self.parse(TaskRequest)
        await self.ensure_started()
        others = await self.joins_others(request.session_id)
        if request.session_id is not None and not others:  # before the task, not in its step
            refuse_other_session(self.runs, request.session_id, self.run_owner())
        permissions = await self.run_permissions()
        task = self.tasks.start(request, permissions, owner=self.run_owner(), others=others)
        self.set_header("X-Resolve-Task-Id", task.task_id)
        await self.stream_events(task)


class TaskEventsHandler(RunsAPIHandler):
    """``GET /resolve/api/tasks/{id}/events`` (``Last-Event-ID`` or ``?after=``)."""

    @web.authenticated
    @authorized("read")
    async def get(self, task_id: str) -> None:
        task = await self.seen_task(task_id)
        await self.stream_events(task, self.resume_after())


class TaskCancelHandler(RunsAPIHandler):
    """``POST /resolve/api/tasks/{id}/cancel``."""

    @web.authenticated
    @authorized("execute")
    async def post(self, task_id: str) -> None:
        await self.seen_task(task_id, deciding=True)
        task = await self.tasks.cancel(task_id)
        self.answer({"ok": True, "task_id": task.task_id})


class SessionTranscriptHandler(RunsAPIHandler):
    """``GET /resolve/api/sessions/{id}/transcript`` → the session's transcript as chat
    messages (what a chat continuing the session sends as history, before fitting)."""

    @web.authenticated
    @authorized("read")
    async def get(self, session_id: str) -> None:
        check_id("session_id", session_id)
        owner = session_owner(self.runs.session_rows(session_id))
        (await self.viewer()).check(owner, f"session '{session_id}'")
        transcripts: SessionTranscripts = self.service("transcripts")
        history = transcripts.history(session_id)
        tokens = sum(message_tokens(m, history.ratio) for m in history.messages)
        self.answer(
            {"session_id": session_id, "messages": history.messages, "tokens_estimate": tokens}
        )


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
    (rf"/resolve/api/runs/{RUN_ID}/messages", RunMessagesHandler),
    (rf"/resolve/api/runs/{RUN_ID}/approvals/(?P<call_id>[^/]{{1,256}})", ApprovalHandler),
    (r"/resolve/api/tasks", TasksHandler),
    (rf"/resolve/api/tasks/{TASK_ID}/events", TaskEventsHandler),
    (rf"/resolve/api/tasks/{TASK_ID}/cancel", TaskCancelHandler),
    (rf"/resolve/api/tasks/{TASK_ID}/messages", TaskMessagesHandler),
    (rf"/resolve/api/sessions/{SESSION_ID}/transcript", SessionTranscriptHandler),
]
