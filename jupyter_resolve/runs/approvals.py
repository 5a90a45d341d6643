"""Approvals of a run's tool calls: create one and wait (or deny by policy), a person's
decision, and the release of every waiting call when the run ends (DESIGN 3.3, 3.6).

A released call is not a decision: nothing runs and no ``tool.approval`` is recorded for it
(the run is ending; its calls still open show as cancelled or interrupted).
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from ..contracts.errors import Conflict, NotFound
from .run import Run

# What a waiting approval resolves to when its run ends (cancel, budget, shutdown).
APPROVAL_RELEASED = "released"

Decision = Literal["approve", "deny"]


async def await_approval(run: Run, call: dict[str, Any], decision: str, timeout: float) -> str:
    """``approve``, ``deny``, or :data:`APPROVAL_RELEASED` when the run ended while the call
    waited. ``call`` is ``{call_id, name, arguments}``; ``decision`` the policy's (``deny``:
    denied at once, by the policy; otherwise a person decides within ``timeout`` seconds)."""
    call_id = str(call["call_id"])
    if decision == "deny":
        run.emit("tool.approval", {**call, "state": "denied", "by": "policy"})
        return "deny"
    future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    run.approvals[call_id] = future
    run.emit("tool.approval", {**call, "state": "waiting"})
    try:
        answer = await asyncio.wait_for(future, timeout)
        by = "person"
    except asyncio.TimeoutError:
        answer, by = "deny", "timeout"
    finally:
        run.approvals.pop(call_id, None)
    if answer == APPROVAL_RELEASED:
        return answer
    state = "approved" if answer == "approve" else "denied"
    run.emit("tool.approval", {**call, "state": state, "by": by})
    return answer


def decide(run: Run, call_id: str, decision: Decision) -> None:
    """A person's decision on a waiting call: NotFound when none waits, Conflict when decided."""
    future = run.approvals.get(call_id)
    if future is None:
        raise NotFound(f"run '{run.run_id}' has no call '{call_id}' waiting for approval")
    if future.done():
        raise Conflict(f"call '{call_id}' was already decided")
    future.set_result(decision)


def release_approvals(run: Run) -> None:
    """Release the calls waiting for a person (approvals and notebook proposals): nothing
    runs, and no decision is recorded."""
    for future in [*run.approvals.values(), *run.proposals.values()]:
        if not future.done():
            future.set_result(APPROVAL_RELEASED)
