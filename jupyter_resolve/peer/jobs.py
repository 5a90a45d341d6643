"""Jobs: work a peer hands over, run as ordinary gateway runs in the background.

A job is a run started for a peer, and its id is the run's id: it belongs to the gateway, not to
the request that submitted it, writes the run log like any run (``run.started`` names the peer),
so it can be looked up again after a restart, and it is listed by ``GET /resolve/api/runs`` with
its peer. A peer sees only its own jobs and may have ``c.Resolve.peer_max_jobs`` running at once.

A peer's job runs with only the tools granted to that peer (``c.Resolve.peer_tools``; none by
default, a model-only answer), and a grant of a tool that runs code needs the sandbox: without it
the job is refused, never started with fewer tools than the admin meant. A job of a Jupyter user
(owner ``jupyter:<name>``, over A2A with a Jupyter login) has the tools that user's chats have.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass, replace
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from ..config import Resolve
from ..contracts.bodies import ChatMessage, ChatRequest
from ..contracts.errors import BadRequest, Conflict, NotFound, TooManyRequests, Unavailable
from ..contracts.permissions import RunPermissions
from ..contracts.run_rows import RunQuery
from ..runs.manager import RunManager, new_id
from ..runs.request import RunRequest
from ..runs.run import Run
from ..runs.steering import steer
from ..runs.transcript import SessionTranscripts
from ..scratch.pool import ScratchKernels
from ..tools.catalog import ToolSchema
from .grants import JUPYTER_OWNER, granted_tools, run_owner, sandbox_refusal, sandboxed_only
from .limits import ID_PATTERN, SubmitWindow, id_problem
from .sessions import context_of, session_for

JobState = Literal["running", "succeeded", "failed", "cancelled"]

MAX_PROMPT = 100_000
KEEP_PROMPTS = 1024
"""Prompts remembered for JSON-RPC task history (the run log keeps the rest)."""


class SubmitArgs(BaseModel):
    """``exec.submit`` arguments."""

    model_config = ConfigDict(extra="forbid")

    prompt: str = Field(min_length=1, max_length=MAX_PROMPT)
    soul: str | None = Field(default=None, min_length=1, max_length=128)


class StatusArgs(BaseModel):
    """``exec.status`` arguments."""

    model_config = ConfigDict(extra="forbid")

    job_id: str = Field(pattern=rf"^{ID_PATTERN}$")  # Rust regex: $ is the very end


def job_state(run: Run) -> JobState:
    """running until ``run.completed``; then succeeded (stop), cancelled, or failed."""
    if not run.completed:
        return "running"
    reason = run.reason
    if reason == "stop":
        return "succeeded"
    if reason == "cancelled":
        return "cancelled"
    return "failed"


@dataclass
class Job:
    """A peer's view of one run."""

    peer: str
    run: Run
    prompt: str | None = None

    @property
    def job_id(self) -> str:
        return self.run.run_id

    @property
    def soul(self) -> str | None:
        return self.run.soul

    @property
    def context_id(self) -> str:
        """The job's conversation as its owner names it (A2A ``contextId``)."""
        return context_of(self.peer, self.run.session_id)

    @property
    def state(self) -> JobState:
        return job_state(self.run)

    @property
    def done(self) -> bool:
        return self.run.completed

    def answer(self) -> str:
        return self.run.text()

    def steered(self) -> list[tuple[str, str]]:
        """The messages that steered the job's run, where they reached it: (id, text)."""
        messages = (e.data for e in self.run.events if e.type == "run.message")
        return [(str(m.get("id", "")), str(m.get("text", ""))) for m in messages]

    def error(self) -> str | None:
        """Why a job that did not succeed ended: the run's last error, else its summary."""
        if self.state == "succeeded":
            return None
        errors = [e.data for e in self.run.events if e.type == "run.error"]
        if errors:
            return str(errors[-1].get("message", ""))
        done = self.run.events[-1].data if self.done else {}
        summary = done.get("summary") or {}
        return str(summary.get("text") or f"the run ended: {self.run.reason}")

    def status(self) -> dict[str, Any]:
        """``exec.status``: the state and, once done, the answer text and run id."""
        body: dict[str, Any] = {"ok": True, "job_id": self.job_id, "state": self.state}
        if self.done:
            body["run_id"] = self.run.run_id
            body["answer"] = self.answer()
            error = self.error()
            if error:
                body["error"] = error
        return body


class JobHost(Protocol):
    """What jobs need of the gateway."""

    config: Resolve
    runs: RunManager
    kernels: ScratchKernels
    transcripts: SessionTranscripts

    def allowed_tools(self) -> list[str]: ...

    def schema(self, name: str) -> ToolSchema | None: ...

    async def start(self) -> None: ...

    def start_run(self, request: RunRequest) -> Run: ...


class JobManager:
    """Jobs are the gateway's runs that carry a peer; this adds the bound and the look-ups."""

    def __init__(self, gateway: JobHost) -> None:
        self.gateway = gateway
        self.prompts: dict[str, str] = {}
        self.window = SubmitWindow(gateway.config.peer_submit_rate)
        # a Jupyter login's contents/kernels permissions, as the Authorizer answered its latest
        # request (peer/handlers.py); a peer's follow from its grant (runs/start.py)
        self.user_permissions: dict[str, RunPermissions] = {}

    def check_rate(self, peer: str) -> None:
        """429 when ``peer`` submitted ``c.Resolve.peer_submit_rate`` jobs in the last minute
        (a Jupyter user's jobs are that user's chats: not bounded here)."""
        if peer.startswith(JUPYTER_OWNER):
            return
        wait = self.window.admit(peer, time.monotonic())
        if wait:
            raise TooManyRequests(
                f"peer '{peer}' submitted {self.window.limit} jobs in the last minute "
                f"(c.Resolve.peer_submit_rate); retry in {wait} s",
                retry_after=wait,
                code="submit_rate",
            )

    def tools_for(self, owner: str) -> tuple[str, ...] | None:
        """The tools a job of ``owner`` may use: the peer's grant within the server's allow
        list; None for a Jupyter user (the server's own chat tools)."""
        if owner.startswith(JUPYTER_OWNER):
            return None
        granted = self.gateway.config.peer_tools
        return granted_tools(granted.get(owner, ()), self.gateway.allowed_tools())

    def exec_granted(self, tools: tuple[str, ...]) -> list[str]:
        """Which of ``tools`` a peer may use only under the sandbox (the schemas' ``peer``; a
        tool of no known schema counts as one)."""
        rules = {name: s.peer_use() for name in tools if (s := self.gateway.schema(name))}
        return sandboxed_only(tools, rules)

    def sandboxed(self) -> bool:
        """Whether scratch kernels really run under the sandbox (the effective value)."""
        return getattr(self.gateway.kernels, "sandbox", "") == "bwrap"

    def live(self, peer: str) -> int:
        runs = self.gateway.runs.runs.values()
        return sum(1 for run in runs if run.peer == peer and not run.completed)

    async def submit(
        self, peer: str, prompt: str, soul: str | None = None, context: str | None = None
    ) -> Job:
        """Start the job's run and return at once; the run goes on in the background.

        ``context`` (an A2A ``contextId``) continues that conversation of the caller's, in the
        caller's own namespace of sessions (``sessions.py``); none starts a new one. A session
        that holds another caller's runs is refused."""
        await self.gateway.start()
        limit = self.gateway.config.peer_max_jobs
        if self.live(peer) >= limit:
            raise Conflict(
                f"peer '{peer}' has {limit} jobs running (c.Resolve.peer_max_jobs); "
                "wait for one to finish or cancel one",
                code="too_many_jobs",
            )
        tools = self.tools_for(peer)
        if tools is not None:
            needs_sandbox = self.exec_granted(tools)
            if needs_sandbox and not self.sandboxed():
                raise Unavailable(sandbox_refusal(peer, needs_sandbox), code="peer_needs_sandbox")
        session_id = None
        if context is not None:
            session_id = session_for(peer, context)
            owners = self.gateway.transcripts.history(session_id).peers
            if owners - {peer}:
                raise BadRequest(
                    f"contextId '{context}' is a conversation of someone else; "
                    "send without contextId to start a new one",
                    code="foreign_context",
                )
        elif not peer.startswith(JUPYTER_OWNER):
            session_id = session_for(peer, new_id("context"))
        self.check_rate(peer)  # last: only a job that starts counts
        request = ChatRequest(
            messages=[ChatMessage(role="user", content=prompt)], soul=soul, session_id=session_id
        )
        permissions = self.user_permissions.get(peer, RunPermissions())
        run = self.gateway.start_run(
            RunRequest(
                request,
                peer=peer,
                owner=run_owner(peer),
                only_tools=tools,
                permissions=permissions,
            )
        )
        self.prompts[run.run_id] = prompt
        while len(self.prompts) > KEEP_PROMPTS:
            del self.prompts[next(iter(self.prompts))]
        return Job(peer=peer, run=run, prompt=prompt)

    def get(self, peer: str, job_id: str) -> Job:
        """The peer's job (also one finished before a restart, read back from the run log)."""
        problem = id_problem("a job id", job_id)
        if problem:
            raise BadRequest(problem, code="bad_id")
        try:
            run = self.gateway.runs.get(job_id)
        except NotFound:
            run = None
        if run is None or run.peer != peer:
            raise NotFound(f"no job '{job_id}' for peer '{peer}'")
        return Job(peer=peer, run=run, prompt=self.prompts.get(job_id))

    async def page(self, peer: str, query: RunQuery) -> tuple[list[Job], str | None, int]:
        """A page of the peer's jobs, newest first (those of earlier server processes too,
        from the run index), the cursor of the next page, and how many the query matches.
        The ended jobs' logs are read off the event loop."""
        runs = self.gateway.runs
        page = runs.page(replace(query, peer=peer))
        total = runs.count(replace(query, peer=peer))
        loaded = await asyncio.to_thread(_load_all, runs, [info.run_id for info in page.runs])
        jobs = [Job(peer=peer, run=run, prompt=self.prompts.get(run.run_id)) for run in loaded]
        return jobs, page.next, total

    async def steer(self, job: Job, text: str) -> dict[str, Any]:
        """A message to the job's working run (runs/steering.py): 400/413/429 for the text,
        409 once the run ended."""
        return await steer(self.gateway.runs, job.run, text)

    async def cancel(self, peer: str, job_id: str) -> Job:
        job = self.get(peer, job_id)
        if not job.done:
            await self.gateway.runs.cancel(job.run.run_id)
        return job

    async def wait(self, job: Job, timeout: float) -> None:
        """Wait up to ``timeout`` seconds for the job to end; the job itself is never cancelled."""
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(_drain(job.run), timeout)


def _load_all(runs: RunManager, run_ids: list[str]) -> list[Run]:
    loaded = []
    for run_id in run_ids:
        with contextlib.suppress(NotFound):  # a log deleted meanwhile (retention)
            loaded.append(runs.load(run_id))
    return loaded


async def _drain(run: Run) -> None:
    async for _event in run.watch(len(run.events)):
        pass
