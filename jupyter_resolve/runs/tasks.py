"""Tasks: the role chain Planner → Specialist → Evaluator → Tool agent as child runs of one
task, streamed as one event stream (DESIGN 4).

The plan goes to the specialist, its findings to the evaluator, the verdict to the tool agent —
or back to the specialist once when the evaluator rejects. Every child event is re-sent in the
task's stream tagged with its ``role`` (and carries its own ``run_id``).
"""

from __future__ import annotations

import asyncio
import logging
import re
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from ..contracts.bodies import ChatRequest
from ..contracts.errors import BadRequest, Conflict, NotFound, ResolveError
from ..contracts.ids import Id
from ..contracts.permissions import RunPermissions
from ..souls import Soul
from .log import RunLog, close_live_logs, read_run_log
from .manager import new_id
from .request import RunRequest
from .run import Run
from .stream import EventStream

DEFAULT_CHAIN = ("planner", "specialist", "evaluator", "tool-agent")
INTERRUPTED = {"reason": "interrupted", "runs": [], "roles": []}
REJECTED = re.compile(r"VERDICT:\s*reject", re.IGNORECASE)


class TaskHost(Protocol):
    """What a task needs of the gateway: the souls, and starting and cancelling runs."""

    souls: dict[str, Soul]

    def start_run(self, request: RunRequest) -> Run: ...

    def check_model(self, model: str | None) -> str: ...

    async def cancel_run(self, run_id: str) -> Run: ...


class TaskRequest(BaseModel):
    """``POST /resolve/api/tasks``."""

    model_config = ConfigDict(extra="forbid", defer_build=True)  # built on the first task

    goal: str = Field(min_length=1, max_length=100_000)
    chain: list[str] | None = Field(default=None, min_length=1, max_length=8)
    session_id: Id | None = None
    model: str | None = Field(default=None, max_length=256)


class Task(EventStream):
    final_event = "task.completed"

    def __init__(
        self, task_id: str, goal: str, chain: list[str], session_id: str, log: RunLog | None
    ) -> None:
        super().__init__(log)
        self.task_id = task_id
        self.goal = goal
        self.chain = chain
        self.session_id = session_id
        self.children: list[Run] = []
        self.runner: asyncio.Task[None] | None = None
        self.cancelled = False
        self.model: str | None = None  # the steps' model (None: the default)
        self.permissions = RunPermissions()  # its starter's: every step runs with them
        self.owner: str | None = None  # who started it: every step is theirs
        self.others = False  # its steps may join other people's sessions (RunRequest.others)

    def emit(self, event_type: str, data: dict[str, Any]) -> None:
        self.append(event_type, {"task_id": self.task_id, **data})

    def running_step(self) -> Run:
        """The step that is running now, which a steering message goes to: 409 when the task
        has ended, or between two steps (for the moment the next one takes to start)."""
        if self.closed:
            raise Conflict(
                f"task '{self.task_id}' has ended: it takes no more messages",
                code="run_ended",
            )
        step = self.children[-1] if self.children else None
        if step is None or step.completed:
            raise Conflict(
                f"task '{self.task_id}' is between two steps: send the message again in a moment",
                code="between_steps",
            )
        return step

    @classmethod
    def from_log(cls, task_id: str, path: Path) -> Task:
        """A task of an earlier server, read back from its log for replay (one it left live
        was closed ``interrupted`` by :meth:`TaskManager.mark_interrupted`)."""
        events = read_run_log(path).events
        started = events[0].data if events and events[0].type == "task.started" else {}
        chain = started.get("chain")
        task = cls(
            task_id,
            goal=str(started.get("goal", "")),
            chain=[str(s) for s in chain] if isinstance(chain, list) else [],
            session_id=str(started.get("session_id", "")),
            log=None,
        )
        owner = started.get("owner")
        task.owner = owner if isinstance(owner, str) and owner else None
        for event in events:
            task.append(event.type, event.data)
        if not task.closed:  # a log without events, or cut after the mark: a replay still ends
            task.append("task.completed", {"task_id": task_id, **INTERRUPTED})
        return task


class TaskManager:
    def __init__(self, gateway: TaskHost, tasks_dir: Path, log: logging.Logger) -> None:
        self.gateway = gateway
        self.tasks_dir = tasks_dir
        self.log = log
        self.tasks: dict[str, Task] = {}

    def start(
        self,
        request: TaskRequest,
        permissions: RunPermissions,
        owner: str | None = None,
        others: bool = False,
    ) -> Task:
        """Start the task; its steps carry ``permissions`` and ``owner``, its starter's."""
        missing = [s for s in request.chain or DEFAULT_CHAIN if s not in self.gateway.souls]
        if missing:
            raise BadRequest(f"chain: no soul named {', '.join(repr(m) for m in missing)}")
        if request.model:
            self.gateway.check_model(request.model)  # a 400 now, not in every step
        task_id = new_id("task")
        session_id = request.session_id or new_id("session")
        chain = list(request.chain or DEFAULT_CHAIN)
        log = RunLog(self.tasks_dir, task_id)
        task = Task(task_id, request.goal, chain, session_id, log)
        task.model = request.model
        task.permissions = permissions
        task.owner, task.others = owner, others
        self.tasks[task_id] = task
        started = {"goal": task.goal, "chain": task.chain, "session_id": session_id}
        task.emit("task.started", {**started, "owner": owner})
        task.runner = asyncio.create_task(self._run(task))
        return task

    def mark_interrupted(self) -> list[str]:
        """On start: tasks a previous process left live end ``interrupted`` in their log."""
        return close_live_logs(self.tasks_dir, "task.completed", "task_id", INTERRUPTED)

    def get(self, task_id: str) -> Task:
        task = self.tasks.get(task_id)
        if task is None:
            path = self.tasks_dir / f"{task_id}.jsonl"
            if "/" in task_id or not path.is_file():
                raise NotFound(f"no task '{task_id}' in this server")
            task = self.tasks[task_id] = Task.from_log(task_id, path)
        return task

    async def cancel(self, task_id: str) -> Task:
        task = self.get(task_id)
        task.cancelled = True
        for child in task.children:
            if not child.completed:
                await self.gateway.cancel_run(child.run_id)
        return task

    async def _child(self, task: Task, soul: str, prompt: str) -> Run:
        request = ChatRequest.model_validate(
            {
                "messages": [{"role": "user", "content": prompt}],
                "soul": soul,
                "session_id": task.session_id,
                "model": task.model,
            }
        )
        run = self.gateway.start_run(
            RunRequest(
                request,
                task_id=task.task_id,
                owner=task.owner,
                permissions=task.permissions,
                others=task.others,
            )
        )
        task.children.append(run)
        async for event in run.watch():
            if event is not None:
                task.emit(event.type, {**event.data, "role": soul})
        return run

    async def _run(self, task: Task) -> None:
        goal = f"Goal: {task.goal}"
        notes: dict[str, str] = {}
        reason, rejected_once = "stop", False
        try:
            queue = list(task.chain)
            while queue:
                soul = queue.pop(0)
                prompt = "\n\n".join([goal, *(f"{k}:\n{v}" for k, v in notes.items())])
                run = await self._child(task, soul, prompt)
                if run.reason != "stop" or task.cancelled:
                    reason = "cancelled" if task.cancelled else str(run.reason)
                    break
                text = run.text()
                role = self.gateway.souls[soul].role
                notes[
                    {"planner": "Plan", "specialist": "Findings", "evaluator": "Verdict"}.get(
                        role, f"{soul} said"
                    )
                ] = text
                if role == "evaluator" and REJECTED.search(text) and not rejected_once:
                    rejected_once = True
                    specialist = next(
                        (s for s in task.chain if self.gateway.souls[s].role == "specialist"),
                        None,
                    )
                    if specialist is not None:
                        queue[:0] = [specialist, soul]
        except ResolveError as exc:
            reason = "error"
            task.emit("run.error", {"code": exc.code, "message": exc.message, "role": None})
        except Exception as exc:  # a task always ends with task.completed
            self.log.exception("task %s failed", task.task_id)
            reason = "error"
            task.emit("run.error", {"code": "internal", "message": str(exc), "role": None})
        task.emit(
            "task.completed",
            {
                "reason": reason,
                "runs": [r.run_id for r in task.children],
                "roles": [r.soul for r in task.children],
                "rejected": rejected_once,
            },
        )
