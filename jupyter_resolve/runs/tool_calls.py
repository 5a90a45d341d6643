"""A run's tool calls, end to end: check, budget, policy, approval, execution, and the
``tool.*`` events (DESIGN 3.3, 3.6). The run manager owns them (:meth:`RunManager.call_tool`);
the tools themselves are the dispatcher's (tools/dispatch.py)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Protocol

from ..config import Resolve
from ..contracts.bodies import ToolCallRequest, ToolResult
from ..contracts.policy import decide
from ..tools.catalog import ToolSchema
from ..tools.dispatch import ToolDispatcher
from .approvals import APPROVAL_RELEASED, await_approval
from .run import Run

SchemaOf = Callable[[str], "ToolSchema | None"]


class CallBudget(Protocol):
    """The budgets a call counts against (the run manager's)."""

    def check_tool_budget(self, run: Run) -> str | None: ...

    async def stop_for_budget(self, run: Run, which: str) -> None: ...


class ToolCalls:
    """The gate every call of a run passes: its tools, its budget, the approval policy."""

    def __init__(
        self,
        *,
        config: Resolve,
        log: logging.Logger,
        tools: ToolDispatcher,
        schema: SchemaOf,
        budget: CallBudget,
    ) -> None:
        self.config = config
        self.log = log
        self.tools = tools
        self.schema = schema
        self.budget = budget

    async def call(self, run: Run, request: ToolCallRequest) -> ToolResult:
        """One call of ``run``: a result for the runtime (its text only)."""
        if run.completed or run.cancel_requested:
            return not_run(request.name)
        if request.name not in run.tool_names or request.name not in self.tools.names:
            # Refused without execution, named so the model can correct itself.
            return await self.tools.call(request, run.tool_names)
        over = self.budget.check_tool_budget(run)
        if over:
            await self.budget.stop_for_budget(run, over)
            return ToolResult(ok=False, output=f"{request.name}: not run, the {over} is used up")
        refused = await self._approve(run, request)
        if refused is not None:
            return refused
        if run.completed or run.cancel_requested:
            return not_run(request.name)
        # The call runs as a task of its own, which the run's end can cancel to stop the tool.
        task = asyncio.create_task(self._execute(run, request))
        run.executing[request.call_id] = task
        try:
            await asyncio.wait({task})
        finally:
            run.executing.pop(request.call_id, None)
        if task.cancelled():  # stopped before it began: no tool.started, nothing ran
            return not_run(request.name)
        # The runtime needs the text only; the MIME bundle went to the clients.
        return task.result().model_copy(update={"mime": None})

    async def _approve(self, run: Run, request: ToolCallRequest) -> ToolResult | None:
        """None when the call may run; else the result that says why not."""
        schema = self.schema(request.name)
        decision = decide(
            request.name,
            schema.effect if schema else "exec",
            schema.approval if schema else "ask",
            self.config.approval_policy,
            always_ask=schema.always_ask if schema else False,
        )
        if decision == "auto":
            return None
        call = {"call_id": request.call_id, "name": request.name, "arguments": request.arguments}
        answer = await await_approval(run, call, decision, self.config.approval_timeout)
        if answer == APPROVAL_RELEASED:
            return not_run(request.name)
        if answer != "approve":
            who = "a person denied" if decision == "ask" else "the approval policy denies"
            return ToolResult(ok=False, output=f"{request.name}: {who} this call; nothing was run")
        return None

    async def _execute(self, run: Run, request: ToolCallRequest) -> ToolResult:
        """Run the tool between its tool.started and tool.completed. Cancelled (the run ended),
        the tool stops and no tool.completed is sent: the call stays open, and clients show it
        cancelled or interrupted by the run's reason (as the golden runs fold it)."""
        run.emit("tool.started", {"call_id": request.call_id, "name": request.name})
        loop = asyncio.get_running_loop()
        started = loop.time()
        try:
            result = await self.tools.call(request, run.tool_names)
        except asyncio.CancelledError:
            run.translator.note_tool_completed(request.call_id)  # the runtime's copy: unwanted
            why = "the run was cancelled" if run.cancel_requested else "the run ended"
            return ToolResult(ok=False, output=f"{request.name}: interrupted, {why}")
        except Exception as exc:  # a tool failure is a result for the model, not a crash
            self.log.exception("tool %s failed", request.name)
            result = ToolResult(ok=False, output=f"{request.name}: {type(exc).__name__}: {exc}")
        result.ms = int((loop.time() - started) * 1000)
        run.translator.note_tool_completed(request.call_id)
        data = {"call_id": request.call_id, "name": request.name, **result.model_dump()}
        run.emit("tool.completed", data)
        return result


def not_run(name: str) -> ToolResult:
    return ToolResult(ok=False, output=f"{name}: the run ended; nothing was run")
