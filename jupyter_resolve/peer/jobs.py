"""Jobs: work a peer hands over, run as ordinary gateway runs in the background.

A job is a run started for a peer: it belongs to the gateway, not to the request that submitted
it, writes the run log like any run, and is listed by ``GET /resolve/api/runs`` with its peer.
A peer sees only its own jobs and may have ``c.Resolve.peer_max_jobs`` running at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..errors import Conflict, NotFound
from ..models import ChatMessage, ChatRequest
from ..runs.manager import new_id
from ..runs.run import Run

if TYPE_CHECKING:
    from ..gateway import Gateway

JobState = Literal["running", "succeeded", "failed", "cancelled"]

MAX_PROMPT = 100_000
KEEP_FINISHED = 256
"""Finished jobs remembered per peer (their runs stay in the run log either way)."""


class SubmitArgs(BaseModel):
    """``exec.submit`` arguments."""

    model_config = ConfigDict(extra="forbid")

    prompt: str = Field(min_length=1, max_length=MAX_PROMPT)
    soul: str | None = Field(default=None, min_length=1, max_length=128)


class StatusArgs(BaseModel):
    """``exec.status`` arguments."""

    model_config = ConfigDict(extra="forbid")

    job_id: str = Field(min_length=1, max_length=128)


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
    job_id: str
    peer: str
    prompt: str
    soul: str | None
    run: Run
    created_at: float = field(default_factory=time.time)

    @property
    def state(self) -> JobState:
        return job_state(self.run)

    @property
    def done(self) -> bool:
        return self.run.completed

    def answer(self) -> str:
        return self.run.text()

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


class JobManager:
    """Every job of this gateway, by id."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway
        self.jobs: dict[str, Job] = {}

    def live(self, peer: str) -> int:
        return sum(1 for j in self.jobs.values() if j.peer == peer and not j.done)

    async def submit(self, peer: str, prompt: str, soul: str | None = None) -> Job:
        """Start the job's run and return at once; the run goes on in the background."""
        await self.gateway.start()
        limit = self.gateway.config.peer_max_jobs
        if self.live(peer) >= limit:
            raise Conflict(
                f"peer '{peer}' has {limit} jobs running (c.Resolve.peer_max_jobs); "
                "wait for one to finish or cancel one",
                code="too_many_jobs",
            )
        request = ChatRequest(messages=[ChatMessage(role="user", content=prompt)], soul=soul)
        run = self.gateway.start_chat(request, peer=peer)
        job = Job(job_id=new_id("job"), peer=peer, prompt=prompt, soul=soul, run=run)
        self.jobs[job.job_id] = job
        self._forget_old(peer)
        return job

    def get(self, peer: str, job_id: str) -> Job:
        job = self.jobs.get(job_id)
        if job is None or job.peer != peer:
            raise NotFound(f"no job '{job_id}' for peer '{peer}'")
        return job

    async def cancel(self, peer: str, job_id: str) -> Job:
        job = self.get(peer, job_id)
        if not job.done:
            await self.gateway.runs.cancel(job.run.run_id)
        return job

    async def wait(self, job: Job, timeout: float) -> None:
        """Wait up to ``timeout`` seconds for the job to end; the job itself is never cancelled."""
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(_drain(job.run), timeout)

    def _forget_old(self, peer: str) -> None:
        finished = [j for j in self.jobs.values() if j.peer == peer and j.done]
        for job in sorted(finished, key=lambda j: j.created_at)[
            : max(0, len(finished) - KEEP_FINISHED)
        ]:
            del self.jobs[job.job_id]


async def _drain(run: Run) -> None:
    async for _event in run.watch(len(run.events)):
        pass
