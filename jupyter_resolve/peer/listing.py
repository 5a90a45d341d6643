"""``ListTasks`` / ``tasks/list`` (pure): a caller's tasks, newest first, filtered by context and
state, a page at a time (the page token is the offset of the next page)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..contracts.errors import RpcError
from .jobs import Job
from .rendering import Version, render_task, state_of

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


def page_bounds(params: dict[str, Any], total: int) -> tuple[int, int]:
    """The offset and size of the page asked for (``pageToken``, ``pageSize``)."""
    size = _whole(params, "pageSize", DEFAULT_PAGE, 0, MAX_PAGE)  # 0: the default
    token = params.get("pageToken") or "0"
    if not isinstance(token, str) or not token.isdigit() or int(token) > total:
        raise RpcError(INVALID_PARAMS, "pageToken: a token from the previous page")
    return int(token), size or DEFAULT_PAGE


def list_tasks(
    jobs: Sequence[Job], params: dict[str, Any], version: Version, history: int | None
) -> dict[str, Any]:
    """The page of ``jobs`` (the caller's, newest first) that ``params`` asks for."""
    context = params.get("contextId")
    if context is not None and not isinstance(context, str):
        raise RpcError(INVALID_PARAMS, "contextId: a string")
    wanted = params.get("status")
    state = None
    if wanted not in (None, "", "TASK_STATE_UNSPECIFIED"):
        state = state_of(wanted) if isinstance(wanted, str) else None
        if state is None:
            raise RpcError(INVALID_PARAMS, "status: a task state (working, completed, …)")
    chosen = [
        job
        for job in jobs
        if (not context or job.run.session_id == context) and state in (None, job.state)
    ]
    offset, size = page_bounds(params, len(chosen))
    page = chosen[offset : offset + size]
    artifacts = version == "0.3" or params.get("includeArtifacts") is True
    following = offset + size if offset + size < len(chosen) else None
    return {
        "tasks": [render_task(job, version, history, artifacts=artifacts) for job in page],
        "nextPageToken": str(following) if following is not None else "",
        "pageSize": size,
        "totalSize": len(chosen),
    }
