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
            return ToolResult(ok=False, output=f"{request.name}: the run ended; nothing was run")
        if answer != "approve":
            who = "a person denied" if decision == "ask" else "the approval policy denies"
            return ToolResult(ok=False, output=f"{request.name}: {who} this call; nothing was run")
    return await _execute(gateway, run, request)


async def _execute(gateway: ToolCallHost, run: Run, request: ToolCallRequest) -> ToolResult:
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
