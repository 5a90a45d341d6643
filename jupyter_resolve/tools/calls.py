"""One tool call from the runtime, end to end: check, budget, policy, approval, execution,
and the ``tool.*`` events (DESIGN 3.3, 3.6)."""

from __future__ import annotations

import asyncio
import logging
from typing import Protocol

from ..config import Resolve
from ..contracts.bodies import ToolCallRequest, ToolResult
from ..contracts.errors import NotFound
from ..contracts.policy import decide
from ..runs.approvals import APPROVAL_RELEASED, await_approval
from ..runs.manager import RunManager
from ..runs.run import Run
from .catalog import ToolSchema
from .dispatch import ToolDispatcher


class ToolCallHost(Protocol):
    """What a tool call needs of the gateway."""

    config: Resolve
    log: logging.Logger
    runs: RunManager
    tools: ToolDispatcher

    def schema(self, name: str) -> ToolSchema | None: ...


async def handle_tool_call(gateway: ToolCallHost, request: ToolCallRequest) -> ToolResult:
    try:
        run = gateway.runs.get(request.run_id)
    except NotFound as exc:
        return ToolResult(ok=False, output=exc.message)
    if run.completed or run.cancel_requested:
        return not_run(request.name)
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
        call = {"call_id": request.call_id, "name": request.name, "arguments": request.arguments}
        answer = await await_approval(run, call, decision, gateway.config.approval_timeout)
        if answer == APPROVAL_RELEASED:
            return not_run(request.name)
        if answer != "approve":
            who = "a person denied" if decision == "ask" else "the approval policy denies"
            return ToolResult(ok=False, output=f"{request.name}: {who} this call; nothing was run")
    if run.completed or run.cancel_requested:
        return not_run(request.name)
    # The call runs as a task of its own, which the run's end can cancel to stop the tool.
    task = asyncio.create_task(_execute(gateway, run, request))
    run.executing[request.call_id] = task
    try:
        await asyncio.wait({task})
    finally:
        run.executing.pop(request.call_id, None)
    if task.cancelled():  # stopped before it began: no tool.started, nothing ran
        return not_run(request.name)
    # The runtime needs the text only; the MIME bundle went to the clients.
    return task.result().model_copy(update={"mime": None})


def not_run(name: str) -> ToolResult:
    return ToolResult(ok=False, output=f"{name}: the run ended; nothing was run")


async def _execute(gateway: ToolCallHost, run: Run, request: ToolCallRequest) -> ToolResult:
    """Run the tool between its tool.started and tool.completed. Cancelled (the run ended),
    the tool stops and no tool.completed is sent: the call stays open, and clients show it
    cancelled or interrupted by the run's reason (as the golden runs fold it)."""
    run.emit("tool.started", {"call_id": request.call_id, "name": request.name})
    loop = asyncio.get_running_loop()
    started = loop.time()
    try:
        result = await gateway.tools.call(request, run.tool_names)
    except asyncio.CancelledError:
        run.translator.note_tool_completed(request.call_id)  # the runtime's copy is not wanted
        why = "the run was cancelled" if run.cancel_requested else "the run ended"
        return ToolResult(ok=False, output=f"{request.name}: interrupted, {why}")
    except Exception as exc:  # a tool failure is a result for the model, not a crash
        gateway.log.exception("tool %s failed", request.name)
        result = ToolResult(ok=False, output=f"{request.name}: {type(exc).__name__}: {exc}")
    result.ms = int((loop.time() - started) * 1000)
    run.translator.note_tool_completed(request.call_id)
    run.emit(
        "tool.completed", {"call_id": request.call_id, "name": request.name, **result.model_dump()}
    )
    return result
