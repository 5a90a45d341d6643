"""The run index's rows, queries and cursors (pure; DESIGN 10.2).

A row says what a listing shows of one run: who started it, for which session, how it ended,
its usage. It is built from ``run.started`` (at the start) and again at ``run.completed``, or from
a run log's first and last lines (and its ``usage`` lines) when the index is rebuilt. A listing
is newest first; its cursor is an opaque string naming the last row shown, ``(started_at,
run_id)``, so pages stay in order while new runs start.
"""

from __future__ import annotations

import base64
import binascii
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from .bodies import CompletionReason, RunInfo
from .errors import BadRequest

DEFAULT_PAGE = 50
MAX_PAGE = 200
PROMPT_TITLE = 200  # characters of the prompt a row keeps

Position = tuple[float, str]
"""Where a listing stands: ``(started_at, id)`` of the last row shown."""

Owners = tuple[str, ...] | None
"""Whose runs a listing keeps beside those without an owner (None: everyone's)."""

REASONS: frozenset[str] = frozenset({"stop", "budget", "cancelled", "error", "interrupted"})


def prompt_title(prompt: Any) -> str | None:
    """The start of the message that began a run."""
    if not isinstance(prompt, str):
        return None
    return prompt if len(prompt) <= PROMPT_TITLE else prompt[: PROMPT_TITLE - 1] + "…"


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _whole(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class Usage:
    """A run's tokens and cost, summed over its ``usage`` events."""

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost: float | None = None


def usage_totals(usages: Iterable[Mapping[str, Any]]) -> Usage:
    """The totals of a run's ``usage`` events' data (``run_cost``, when given, is the run's
    cost so far; else the events' ``cost`` add up)."""
    prompt = completion = 0
    cost = 0.0
    run_cost: float | None = None
    seen = priced = False
    for usage in usages:
        seen = True
        prompt += _whole(usage.get("prompt_tokens")) or 0
        completion += _whole(usage.get("completion_tokens")) or 0
        value = usage.get("cost")
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            cost += float(value)
            priced = True
        total = usage.get("run_cost")
        if isinstance(total, (int, float)) and not isinstance(total, bool):
            run_cost = float(total)
    if not seen:
        return Usage()
    return Usage(prompt, completion, run_cost if run_cost is not None else cost if priced else None)


@dataclass(frozen=True)
class RunRow:
    """One run as the index keeps it."""

    run_id: str
    session_id: str
    model: str
    started_at: float
    status: str = "running"  # running | completed
    reason: str | None = None
    ended_at: float | None = None
    soul: str | None = None
    task_id: str | None = None
    parent: str | None = None
    peer: str | None = None
    owner: str | None = None
    prompt: str | None = None
    events: int = 0
    usage: Usage = Usage()

    @property
    def position(self) -> Position:
        return (self.started_at, self.run_id)

    @property
    def top_level(self) -> bool:
        """A turn of its session's conversation (not a task's step, not a delegation)."""
        return self.parent is None and self.task_id is None

    def info(self) -> RunInfo:
        reason: CompletionReason | None = self.reason if self.reason in REASONS else None  # type: ignore[assignment]
        return RunInfo(
            run_id=self.run_id,
            session_id=self.session_id,
            soul=self.soul,
            model=self.model,
            status="completed" if self.status == "completed" else "running",
            reason=reason,
            started_at=self.started_at,
            ended_at=self.ended_at,
            prompt=self.prompt,
            events=self.events,
            peer=self.peer,
            owner=self.owner,
            parent=self.parent,
            task_id=self.task_id,
            prompt_tokens=self.usage.prompt_tokens,
            completion_tokens=self.usage.completion_tokens,
            cost=self.usage.cost,
        )


def started_row(run_id: str, started: Mapping[str, Any], ts: float, events: int = 1) -> RunRow:
    """The row ``run.started``'s data makes."""
    return RunRow(
        run_id=run_id,
        session_id=str(started.get("session_id") or ""),
        model=str(started.get("model") or ""),
        started_at=ts,
        soul=_text(started.get("soul")) or _text(started.get("agent")),
        task_id=_text(started.get("task_id")),
        parent=_text(started.get("parent")),
        peer=_text(started.get("peer")),
        owner=_text(started.get("owner")),
        prompt=prompt_title(started.get("prompt")),
        events=events,
    )


def completed_row(
    row: RunRow, completed: Mapping[str, Any], ts: float, events: int, usage: Usage
) -> RunRow:
    """``row`` once ``run.completed``'s data ended it."""
    reason = completed.get("reason")
    return replace(
        row,
        status="completed",
        reason=reason if isinstance(reason, str) else "error",
        ended_at=ts,
        events=events,
        usage=usage,
    )


def row_from_log(
    run_id: str,
    first: Mapping[str, Any] | None,
    last: Mapping[str, Any] | None,
    usages: Iterable[Mapping[str, Any]] = (),
) -> RunRow | None:
    """The row a run log's first and last records make (None when the first is not a
    ``run.started``: not a run's log)."""
    if (
        first is None
        or first.get("type") != "run.started"
        or not isinstance(first.get("data"), dict)
    ):
        return None
    ts = _number(first.get("ts"))
    last = last or first
    events = _whole(last.get("seq")) or 1
    row = started_row(run_id, first["data"], ts, events)
    data = last.get("data")
    if last.get("type") == "run.completed" and isinstance(data, dict):
        return completed_row(row, data, _number(last.get("ts")) or ts, events, usage_totals(usages))
    return replace(row, events=events)


def _number(value: Any) -> float:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    return float(value) if ok else 0.0


# -- cursors -----------------------------------------------------------------------------------


def encode_cursor(position: Position) -> str:
    started_at, key = position
    return base64.urlsafe_b64encode(f"{started_at!r}\n{key}".encode()).decode().rstrip("=")


def decode_cursor(cursor: str, name: str = "before") -> Position:
    """The position an :func:`encode_cursor` string names; a :class:`BadRequest` naming
    ``name`` for anything else."""
    problem = BadRequest(f"{name}: not a cursor from a previous page (use its 'next')")
    if not isinstance(cursor, str) or len(cursor) > 400:
        raise problem
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        stamp, key = text.split("\n", 1)
        started_at = float(stamp)
    except (binascii.Error, UnicodeDecodeError, ValueError) as exc:
        raise problem from exc
    if not math.isfinite(started_at) or not key or "\n" in key:
        raise problem
    return started_at, key


def page_limit(value: Any, name: str = "limit") -> int:
    """A page size from a query (text or number): 1 to :data:`MAX_PAGE`; empty: the default."""
    if value is None or value == "":
        return DEFAULT_PAGE
    if isinstance(value, str) and value.isdigit():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= MAX_PAGE:
        raise BadRequest(f"{name}: a whole number from 1 to {MAX_PAGE}")
    return value


# -- queries -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunQuery:
    """Which runs a listing wants, newest first, after ``before``.

    ``reasons`` keeps only runs that ended for one of them; ``not_reasons`` keeps ended runs that
    ended for none of them (A2A's "failed"); ``owners`` (not None) keeps the runs without an
    owner and those of these owners (a person's listing: ``ownership.Viewer.owners``)."""

    session_id: str | None = None
    status: str | None = None  # running | completed
    peer: str | None = None
    reasons: tuple[str, ...] | None = None
    not_reasons: tuple[str, ...] | None = None
    owners: Owners = None
    before: Position | None = None
    limit: int = DEFAULT_PAGE

    def matches(self, info: RunInfo, *, ignore_position: bool = False) -> bool:
        """The same test as :meth:`where`, for runs held in memory."""
        if self.session_id is not None and info.session_id != self.session_id:
            return False
        if self.status is not None and info.status != self.status:
            return False
        if self.peer is not None and info.peer != self.peer:
            return False
        if self.reasons is not None and info.reason not in self.reasons:
            return False
        if self.owners is not None and info.owner is not None and info.owner not in self.owners:
            return False
        if self.not_reasons is not None and (
            info.status != "completed" or info.reason in self.not_reasons
        ):
            return False
        if self.before is not None and not ignore_position:
            return (info.started_at, info.run_id) < self.before
        return True

    def where(self, *, ignore_position: bool = False) -> tuple[str, list[Any]]:
        """The SQL condition (over the index's ``runs`` table) and its parameters."""
        terms: list[str] = ["1"]
        params: list[Any] = []
        for column, value in (
            ("session_id", self.session_id),
            ("status", self.status),
            ("peer", self.peer),
        ):
            if value is not None:
                terms.append(f"{column} = ?")
                params.append(value)
        if self.reasons is not None:
            terms.append(f"reason IN ({', '.join('?' * len(self.reasons))})")
            params.extend(self.reasons)
        if self.owners is not None:
            marks = ", ".join("?" * len(self.owners))
            terms.append(f"(owner IS NULL OR owner IN ({marks}))" if marks else "owner IS NULL")
            params.extend(self.owners)
        if self.not_reasons is not None:
            marks = ", ".join("?" * len(self.not_reasons))
            terms.append(f"status = 'completed' AND reason NOT IN ({marks})")
            params.extend(self.not_reasons)
        if self.before is not None and not ignore_position:
            terms.append("(started_at, run_id) < (?, ?)")
            params.extend(self.before)
        return " AND ".join(terms), params


def merge_page(
    query: RunQuery,
    indexed: list[RunInfo],
    overlay: Mapping[str, RunInfo],
) -> tuple[list[RunInfo], Position | None]:
    """A page from the index's answer (up to ``limit + 1`` rows) and what memory knows better
    (live runs, rows not written yet): memory wins, the query is applied again, newest first.
    Returns the page and, when there is more, the position of its last row."""
    merged = {info.run_id: overlay.get(info.run_id, info) for info in indexed}
    for run_id, info in overlay.items():
        merged.setdefault(run_id, info)
    chosen = sorted(
        (i for i in merged.values() if query.matches(i)),
        key=lambda i: (i.started_at, i.run_id),
        reverse=True,
    )
    page = chosen[: query.limit]
    more = len(chosen) > query.limit or len(indexed) > query.limit
    if not more:
        return page, None
    if page:
        return page, (page[-1].started_at, page[-1].run_id)
    last = indexed[query.limit - 1] if len(indexed) >= query.limit else indexed[-1]
    return page, (last.started_at, last.run_id)
