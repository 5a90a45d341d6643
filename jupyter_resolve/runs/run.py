"""One run: its events in order, its log, the clients watching it, its pending approvals."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from ..contracts.bodies import CompletionReason, Event, EventType, RunInfo, ToolResult
from ..contracts.budget import Limits
from ..contracts.frames import FrameTranslator
from .inference_notes import RunNotes
from .log import LoggedRun, RunLog
from .stream import EventStream


class Run(EventStream):
    """A run of the agent. Every event's data carries ``run_id``."""

    def __init__(
        self,
        *,
        run_id: str,
        session_id: str,
        soul: str | None,
        model: str,
        budget: int,
        log: RunLog | None,
        tool_names: list[str] | None = None,
        limits: Limits | None = None,
    ) -> None:
        super().__init__(log)
        self.run_id = run_id
        self.session_id = session_id
        self.soul = soul
        self.model = model
        self.budget = budget
        self.tool_names = list(tool_names or [])
        self.started_at = time.time()
        self.ended_at: float | None = None
        self.translator = FrameTranslator(budget=budget)
        self.task: asyncio.Task[None] | None = None
        self.cancel_requested = False
        self.limits = limits or Limits()  # the budgets the gateway enforces (rounds: runtime's)
        self.tool_calls = 0
        self.notes = RunNotes()  # what its inference streams said (runs/inference_notes.py)
        self.approvals: dict[str, asyncio.Future[str]] = {}
        # notebook_propose calls waiting for a person, by proposal id (released like approvals)
        self.proposals: dict[str, asyncio.Future[Any]] = {}
        self.notebook: str | None = None  # a notebook chat's notebook: the tools' default
        self.peer: str | None = None
        self.parent: str | None = None
        self.task_id: str | None = None  # the task whose step this run is
        self.delegations = 0
        # The calls running right now, by call id: each task ends with its tool.completed,
        # and cancelling it stops the tool (the run's end does, before run.completed).
        self.executing: dict[str, asyncio.Task[ToolResult]] = {}
        # What each round is fitted to in flight (contracts.context.fit_round): 0 = not fitted
        self.window = 0
        self.ratio = 1.0
        # the first n tool messages of its requests are elided (a step's state, kept until
        # the next step); stepped: a round shed some of the run's own outputs
        self.elided_tools = 0
        self.stepped = False
        # steering (runs/steering.py): messages held until the runtime has the run, and what
        # releases them once it does (the runtime's first frame read)
        self.held_messages: list[tuple[str, str]] = []
        self.on_attached: Callable[[], None] | None = None
        self.background: set[asyncio.Future[None]] = set()

    @property
    def completed(self) -> bool:
        return self.closed

    @property
    def reason(self) -> CompletionReason | None:
        last = self.events[-1] if self.events else None
        if last is not None and last.type == "run.completed":
            reason: CompletionReason = last.data["reason"]
            return reason
        return None

    def text(self) -> str:
        return "".join(e.data["text"] for e in self.events if e.type == "text.delta")

    def emit(self, event_type: EventType, data: dict[str, Any]) -> Event | None:
        """Append one event: sequence, log, then wake the watchers (None: the run had ended,
        the event is dropped)."""
        event = self.append(event_type, {"run_id": self.run_id, **data})
        if self.closed and self.ended_at is None:
            self.ended_at = time.time()
        return event

    def emit_all(self, emitted: list[tuple[EventType, dict[str, Any]]]) -> None:
        """Append a batch of events: one log write, one wake of the watchers."""
        if self.on_attached is not None and self.translator.attached:
            released, self.on_attached = self.on_attached, None
            released()
        if not emitted:
            return
        self.append_many([(kind, {"run_id": self.run_id, **data}) for kind, data in emitted])
        if self.closed and self.ended_at is None:
            self.ended_at = time.time()

    def prompt_title(self) -> str | None:
        """The start of the message that began the run (``run.started`` keeps it)."""
        started = self.events[0].data if self.events else {}
        prompt = started.get("prompt")
        if not isinstance(prompt, str):
            return None
        return prompt if len(prompt) <= 200 else prompt[:199] + "…"

    @property
    def owner(self) -> str | None:
        """Who started the run, as ``run.started`` says (DESIGN 10.2)."""
        started = self.events[0].data if self.events else {}
        owner = started.get("owner")
        return owner if isinstance(owner, str) and owner else None

    def info(self) -> RunInfo:
        return RunInfo(
            run_id=self.run_id,
            session_id=self.session_id,
            soul=self.soul,
            model=self.model,
            status="completed" if self.completed else "running",
            reason=self.reason,
            started_at=self.started_at,
            ended_at=self.ended_at,
            prompt=self.prompt_title(),
            task_id=self.task_id,
            events=len(self.events),
            peer=self.peer,
            owner=self.owner,
            parent=self.parent,
        )

    @classmethod
    def from_log(cls, run_id: str, logged: LoggedRun) -> Run:
        """A finished run read back from its log (for listing and replay)."""
        events = logged.events
        started = events[0].data if events and events[0].type == "run.started" else {}
        run = cls(
            run_id=run_id,
            session_id=str(started.get("session_id", "")),
            soul=started.get("soul"),
            model=str(started.get("model", "")),
            budget=int((started.get("budget") or {}).get("rounds", 0)),
            log=None,
        )
        run.peer = started.get("peer")
        run.parent = started.get("parent")
        run.task_id = started.get("task_id")
        for event in events:
            run.append(event.type, event.data)
        run.translator.completed = run.closed
        if logged.first_ts is not None:
            run.started_at = logged.first_ts
        if run.closed:
            run.ended_at = logged.last_ts
        return run
