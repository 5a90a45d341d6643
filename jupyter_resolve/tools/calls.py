"""One tool call from the runtime, end to end: check, budget, policy, approval, execution,
and the ``tool.*`` events (DESIGN 3.3, 3.6)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from ..contracts.bodies import ToolCallRequest, ToolResult
from ..contracts.errors import NotFound
from ..contracts.policy import decide
from ..runs.run import APPROVAL_RELEASED, Run

if TYPE_CHECKING:
    from ..gateway import Gateway


async def handle_tool_call(gateway: Gateway, request: ToolCallRequest) -> ToolResult:
    try:
        run = gateway.runs.get(request.run_id)
    except NotFound as exc:
        return ToolResult(ok=False, output=exc.message)
    if request.name not in run.tool_names or request.name not in gateway.tools.names:
        # Refused without execution, named so the model can correct itself.
        return await gateway.tools.call(request, run.tool_names)
    over = gateway.runs.check_tool_budget(run)
    if over:
        await gateway.runs.stop_for_budget(run, over)
        return ToolResult(ok=False, output=f"{request.name}: not run, the {over} is used up")
    schema = gateway.schema(request.name)
    decision = decide(
        request.name,
        schema.effect if schema else "exec",
        schema.approval if schema else "ask",
        gateway.config.approval_policy,
    )
    if decision != "auto":
        answer = await _approval(gateway, run, request, decision)
        if answer == APPROVAL_RELEASED:
            return ToolResult(ok=False, output=f"{request.name}: the run ended; nothing was run")
        if answer != "approve":
            who = "a person denied" if decision == "ask" else "the approval policy denies"
            return ToolResult(ok=False, output=f"{request.name}: {who} this call; nothing was run")
    return await _execute(gateway, run, request)


async def _approval(gateway: Gateway, run: Run, request: ToolCallRequest, decision: str) -> str:
    """``approve``, ``deny``, or APPROVAL_RELEASED when the run ended while the call waited."""
    event = {"call_id": request.call_id, "name": request.name, "arguments": request.arguments}
    if decision == "deny":
        run.emit("tool.approval", {**event, "state": "denied", "by": "policy"})
        return "deny"
    future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    run.approvals[request.call_id] = future
    run.emit("tool.approval", {**event, "state": "waiting"})
    try:
        answer = await asyncio.wait_for(future, gateway.config.approval_timeout)
        by = "person"
    except asyncio.TimeoutError:
        answer, by = "deny", "timeout"
    finally:
        run.approvals.pop(request.call_id, None)
    if answer == APPROVAL_RELEASED:
        return answer
    state = "approved" if answer == "approve" else "denied"
    run.emit("tool.approval", {**event, "state": state, "by": by})
    return answer


async def _execute(gateway: Gateway, run: Run, request: ToolCallRequest) -> ToolResult:
    run.emit("tool.started", {"call_id": request.call_id, "name": request.name})
    loop = asyncio.get_running_loop()
    started = loop.time()
    run.executing.add(request.call_id)
    try:
        result = await gateway.tools.call(request, run.tool_names)
    except Exception as exc:  # a tool failure is a result for the model, not a crash
        gateway.log.exception("tool %s failed", request.name)
        result = ToolResult(ok=False, output=f"{request.name}: {type(exc).__name__}: {exc}")
    finally:
        run.executing.discard(request.call_id)
    result.ms = int((loop.time() - started) * 1000)
    run.translator.note_tool_completed(request.call_id)
    run.emit(
        "tool.completed", {"call_id": request.call_id, "name": request.name, **result.model_dump()}
    )
    # The runtime needs the text only; the MIME bundle went to the clients.
    return result.model_copy(update={"mime": None})
