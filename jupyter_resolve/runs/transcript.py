"""A session's transcript, read from its run logs (DESIGN 9.1: nothing else is stored).

The transcript is the session's top-level runs in the order they started: a run a task started
(``task_id``) or a delegation (``parent``) is not a turn of the conversation (a task's steps pass
their notes on in their prompts; a delegation's answer is its parent's tool result). Live runs
are left out until they end. The session's runs are found through the run index, so only their
own logs are read. The fold itself is pure (:mod:`..contracts.transcript`).

A run whose ``context.compacted`` carries a model's summary (``summarized_runs``) changes the
transcript from then on: the summary opens it, standing for the runs it names (the newest such
summary wins: it summarized the one before).

The elision state the session's last run ended with (``elided_tools``: a step elided the first n
tool messages, contracts/context.py; ``left_out``: the leading messages a step without a summary
left out) carries over to the next turn when the transcript is still that run's history and its
own messages, so the next prompt extends the last one.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any

from ..contracts.bodies import Event
from ..contracts.compaction import summary_message
from ..contracts.context import calibration
from ..contracts.errors import Forbidden
from ..contracts.ownership import session_owner
from ..contracts.transcript import Message, fold_run
from .log import read_run_log
from .manager import RunManager

KEEP_FOLDED = 1024  # finished runs whose messages stay cached (tool outputs up to 20k each)


@dataclass(frozen=True)
class Summary:
    """A model's summary of a session's oldest runs, as a run's ``context.compacted`` logged it."""

    text: str
    runs: tuple[str, ...]


@dataclass
class SessionHistory:
    """A session's transcript and the token-estimate correction its last run measured.

    ``turn_runs`` names, for each turn of ``messages`` (a user message and what follows), the
    run it came from: None for the summary that opens it, which stands for ``summarized``."""

    messages: list[Message] = field(default_factory=list)
    ratio: float = 1.0
    peers: set[str | None] = field(default_factory=set)
    runs: int = 0
    turn_runs: list[str | None] = field(default_factory=list)
    summarized: tuple[str, ...] = ()
    elided_tools: int = 0
    left_out: int = 0

    def left_out_for(self, summaries: bool) -> int:
        """The leading messages to leave out before fitting: those the last step without a
        summary left out (with summaries on, the next step summarizes them instead)."""
        return 0 if summaries else self.left_out

    def elided_for(self, summaries: bool) -> int:
        """The elision state to fit with (it counts from after the messages left out)."""
        return self.elided_tools if self.left_out_for(summaries) == self.left_out else 0


# messages, ratio, summary, (elided_tools, history_messages, left_out_messages) as it ended
_Folded = tuple[list[Message], float, Summary | None, tuple[int, int, int]]


class SessionTranscripts:
    """Finds a session's runs (the run index, and memory for the live ones) and folds them,
    caching the messages of finished runs."""

    def __init__(self, runs: RunManager) -> None:
        self.runs = runs
        self._folded: dict[str, _Folded] = {}

    def _events(self, run_id: str) -> tuple[list[Event], bool]:
        run = self.runs.held(run_id)
        if run is not None:
            return list(run.events), run.completed
        with contextlib.suppress(OSError):
            events = read_run_log(self.runs.runs_dir / f"{run_id}.jsonl").events
            return events, bool(events) and events[-1].type == "run.completed"
        return [], False

    def _fold(self, run_id: str, ratio: float) -> _Folded | None:
        cached = self._folded.get(run_id)
        if cached is not None:
            return cached
        events, completed = self._events(run_id)
        if not completed:
            return None
        folded = (
            fold_run(events),
            _measured_ratio(events, ratio),
            _summary(events),
            _elision(events),
        )
        self._folded[run_id] = folded
        while len(self._folded) > KEEP_FOLDED:
            del self._folded[next(iter(self._folded))]  # the oldest folded first
        return folded

    def history(self, session_id: str) -> SessionHistory:
        """The transcript of ``session_id`` (empty for a new session)."""
        result = SessionHistory()
        turns: list[tuple[str, list[Message]]] = []
        elision = (0, -1, 0)
        summary: Summary | None = None
        for row in self.runs.session_rows(session_id):
            result.peers.add(row.peer)
            if not row.top_level:
                continue
            run_id = row.run_id
            folded = self._fold(run_id, result.ratio)
            if folded is None:
                continue  # live: it joins the transcript when it ends
            messages, result.ratio, summarized, elision = folded
            summary = summarized or summary
            turns.append((run_id, messages))
            result.runs += 1
        if summary is not None:
            result.messages.append(summary_message(summary.text, len(summary.runs)))
            result.turn_runs.append(None)
            result.summarized = summary.runs
        before = -1  # where the last run's messages start
        for run_id, messages in turns:
            if run_id not in result.summarized and messages:
                before = len(result.messages)
                result.messages.extend(messages)
                result.turn_runs.append(run_id)
        # the last run's state holds when its history is what comes before its messages
        elided, history_messages, left_out = elision
        last = before >= 0 and result.turn_runs[-1] == turns[-1][0]
        if last and left_out + history_messages == before:
            result.elided_tools, result.left_out = elided, left_out
        return result


def _summary(events: list[Event]) -> Summary | None:
    """The model's summary a run's ``context.compacted`` logged, if any."""
    for event in events[:3]:  # it follows run.started at once
        if event.type != "context.compacted":
            continue
        text, runs = event.data.get("summary"), event.data.get("summarized_runs")
        if isinstance(text, str) and isinstance(runs, list) and runs:
            return Summary(text, tuple(str(r) for r in runs))
    return None


def _elision(events: list[Event]) -> tuple[int, int, int]:
    """The elision state a run ended with, the length of the history it counts from and the
    transcript's messages left out before that history."""
    elided, history_messages, left_out = 0, -1, 0
    for event in events:
        data = event.data
        if event.type == "run.started":
            data = data.get("context") or {}
        elif event.type != "context.compacted":
            continue
        if isinstance(data.get("elided_tools"), int):
            elided = data["elided_tools"]
        if isinstance(data.get("history_messages"), int):
            history_messages = data["history_messages"]
        if isinstance(data.get("left_out_messages"), int):
            left_out = data["left_out_messages"]
    return elided, history_messages, left_out


def _measured_ratio(events: list[Event], previous: float) -> float:
    """The run's estimate correction: its first reported prompt_tokens over the estimate it
    made (``run.started.context``), relative to the ratio it used."""
    started = events[0].data if events else {}
    context: Any = started.get("context") or {}
    if not isinstance(context, dict):
        return previous
    used = context.get("ratio")
    base = float(used) if isinstance(used, (int, float)) and used > 0 else previous
    estimated = context.get("tokens_estimate")
    usage = next((e.data for e in events if e.type == "usage"), None)
    if not isinstance(estimated, int) or usage is None:
        return base
    reported = usage.get("prompt_tokens")
    return calibration(reported if isinstance(reported, int) else 0, estimated, base)


def refuse_other_session(runs: RunManager, session_id: str, owner: str | None) -> None:
    """A session is its owner's (DESIGN 10.2): a run naming another person's session would read
    their transcript and work in their scratch kernel. 403 ``not_owner`` when ``session_id`` is
    a session of someone other than ``owner`` (a session without an owner is everyone's)."""
    first = session_owner(runs.session_rows(session_id))
    if first is not None and first != owner:
        raise Forbidden(
            f"session_id: '{session_id}' is another person's session; start a new one",
            code="not_owner",
        )
