"""``ListTasks`` / ``tasks/list`` (pure): what a call asks for (context, state, a page), and the
answer for a page of the caller's tasks, newest first. The page token is the run index's cursor
(opaque; ``nextPageToken`` of the page before), so pages stay in order while tasks start."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..contracts.errors import BadRequest, RpcError
from ..contracts.run_rows import Position, RunQuery, decode_cursor
from .jobs import Job, JobState
from .rendering import Version, render_task, state_of
from .sessions import session_for

INVALID_PARAMS = -32602
DEFAULT_PAGE = 50
MAX_PAGE = 100


def _whole(params: dict[str, Any], name: str, default: int, low: int, high: int) -> int:
    value = params.get(name, default)
    if isinstance(value, str) and value.isdigit():
        value = int(value)  # protobuf's JSON writes some numbers as strings
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise RpcError(INVALID_PARAMS, f"{name}: a whole number from {low} to {high}")
    return value


@dataclass(frozen=True)
class ListParams:
    """A ``ListTasks`` call's filters and page."""

    context: str | None
    state: JobState | None
    size: int
    after: Position | None  # the page token's position


def list_params(params: dict[str, Any]) -> ListParams:
    """Read and check ``contextId``, ``status``, ``pageSize`` and ``pageToken``."""
    context = params.get("contextId")
    if context is not None and not isinstance(context, str):
        raise RpcError(INVALID_PARAMS, "contextId: a string")
    wanted = params.get("status")
    state = None
    if wanted not in (None, "", "TASK_STATE_UNSPECIFIED"):
        state = state_of(wanted) if isinstance(wanted, str) else None
        if state is None:
            raise RpcError(INVALID_PARAMS, "status: a task state (working, completed, …)")
    size = _whole(params, "pageSize", DEFAULT_PAGE, 0, MAX_PAGE) or DEFAULT_PAGE  # 0: default
    token = params.get("pageToken") or None
    after = None
    if token is not None:
        if not isinstance(token, str):
            raise RpcError(INVALID_PARAMS, "pageToken: a token from the previous page")
        try:
            after = decode_cursor(token, "pageToken")
        except BadRequest as exc:
            raise RpcError(INVALID_PARAMS, "pageToken: a token from the previous page") from exc
    return ListParams(context or None, state, size, after)


def run_query(owner: str, wanted: ListParams) -> RunQuery:
    """The run index's query for a caller's tasks (a task is a run that carries its peer)."""
    by_state: dict[JobState | None, dict[str, Any]] = {
        None: {},
        "running": {"status": "running"},
        "succeeded": {"reasons": ("stop",)},
        "cancelled": {"reasons": ("cancelled",)},
        "failed": {"not_reasons": ("stop", "cancelled")},
    }
    return RunQuery(
        session_id=None if wanted.context is None else session_for(owner, wanted.context),
        peer=owner,
        before=wanted.after,
        limit=wanted.size,
        **by_state[wanted.state],
    )


def list_answer(
    jobs: Sequence[Job],
    following: str | None,
    total: int,
    wanted: ListParams,
    params: dict[str, Any],
    version: Version,
    history: int | None,
) -> dict[str, Any]:
    """The answer for one page of ``jobs`` (newest first)."""
    artifacts = version == "0.3" or params.get("includeArtifacts") is True
    return {
        "tasks": [render_task(job, version, history, artifacts=artifacts) for job in jobs],
        "nextPageToken": following or "",
        "pageSize": wanted.size,
        "totalSize": total,
    }
