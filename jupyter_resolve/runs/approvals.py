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
ALWAYS = ":always"  # a decision for good, as the waiting call reads it

Decision = Literal["approve", "deny"]


async def await_approval(run: Run, call: dict[str, Any], decision: str, timeout: float) -> str:
    """``approve``, ``deny``, or :data:`APPROVAL_RELEASED` when the run ended while the call
    waited. ``call`` is ``{call_id, name, arguments}``; ``decision`` the policy's (``deny``:
    denied at once, by the policy; otherwise a person decides within ``timeout`` seconds)."""
    answer, _always = await await_decision(run, call, decision, timeout)
    return answer


async def await_decision(
    run: Run, call: dict[str, Any], decision: str, timeout: float, lasting: bool = False
) -> tuple[str, bool]:
    """:func:`await_approval`, and whether the person decided for good: only a call that
    offers that (``lasting``: an external agent's permission request) takes ``always``; the
    gateway's own calls ask each time."""
    call_id = str(call["call_id"])
    if decision == "deny":
        run.emit("tool.approval", {**call, "state": "denied", "by": "policy"})
        return "deny", False
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
        return answer, False
    always = lasting and answer.endswith(ALWAYS)
    answer = answer.removesuffix(ALWAYS)
    state = "approved" if answer == "approve" else "denied"
    lasts = {"always": True} if always else {}
    run.emit("tool.approval", {**call, "state": state, "by": by, **lasts})
    return answer, always


def decide(run: Run, call_id: str, decision: Decision, always: bool = False) -> None:
    """A person's decision on a waiting call (``always``: for good, where the call offers
    that): NotFound when none waits, Conflict when decided."""
    future = run.approvals.get(call_id)
    if future is None:
        raise NotFound(f"run '{run.run_id}' has no call '{call_id}' waiting for approval")
    if future.done():
        raise Conflict(f"call '{call_id}' was already decided")
    future.set_result(decision + (ALWAYS if always else ""))


def release_approvals(run: Run) -> None:
    """Release the calls waiting for a person (approvals and notebook proposals): nothing
    runs, and no decision is recorded."""
    for future in [*run.approvals.values(), *run.proposals.values()]:
        if not future.done():
            future.set_result(APPROVAL_RELEASED)
