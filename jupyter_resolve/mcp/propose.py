"""``notebook_propose`` for MCP clients (DESIGN 9.2, 9.3): cells an outside agent proposes for a
notebook, which a person accepts or rejects in JupyterLab.

The proposal becomes a run of its own, with no model: ``run.started``, the call, its
``notebook.proposal``, then the person's ``notebook.decision`` and the call's result, as a
run's proposal would be. So the panel shows it in the session like any run, the decision goes
through the same endpoint (``POST /resolve/api/runs/{id}/proposals/{proposal_id}``) and the
run log keeps it. The MCP call answers with the decision (and the outputs when the cells ran),
sending progress while it waits.
"""

from __future__ import annotations

import secrets
import time
from typing import Any, Protocol

from pydantic import ConfigDict

from .._version import __version__
from ..contracts.bodies import CompletionReason, ToolCallRequest
from ..contracts.ids import Id
from ..contracts.notebook import ProposeArguments
from ..contracts.run_manifest import run_manifest, tool_entry
from ..notebook.tools import NotebookHost, notebook_propose
from ..runs.manager import new_id
from ..runs.run import Run

NAME = "notebook_propose"


class ProposeHost(NotebookHost, Protocol):
    """What an MCP client's proposal needs: the notebook tools' services, and the tool's
    spec (for the run's manifest)."""

    def tool_specs(self) -> list[dict[str, Any]]: ...


class McpProposeArgs(ProposeArguments):
    """``notebook_propose`` as MCP clients call it: the tool's arguments, and the session the
    proposal's run joins (a new one when not given)."""

    model_config = ConfigDict(extra="forbid")
    session_id: Id | None = None


async def propose(host: ProposeHost, args: McpProposeArgs, progress: Any) -> dict[str, Any]:
    """Start the proposal's run, wait for the person's decision, answer with the tool result."""
    arguments = args.model_dump(exclude_none=True, exclude={"session_id"})
    call_id = f"call_mcp_{secrets.token_hex(8)}"
    outcome: dict[str, Any] = {}

    async def work(run: Run) -> CompletionReason:
        run.emit("tool.requested", {"call_id": call_id, "name": NAME, "arguments": arguments})
        run.emit("tool.started", {"call_id": call_id, "name": NAME})
        started = time.monotonic()
        request = ToolCallRequest(
            run_id=run.run_id, call_id=call_id, name=NAME, arguments=arguments
        )
        result = await notebook_propose(host, request)
        result.ms = int((time.monotonic() - started) * 1000)
        run.emit("tool.completed", {"call_id": call_id, "name": NAME, **result.model_dump()})
        outcome["result"] = result
        return "stop"

    session_id = args.session_id or new_id("session")
    prompt = f"(an MCP client proposes {len(args.cells)} cell(s) for {args.notebook})"
    specs = [t for t in host.tool_specs() if t["function"]["name"] == NAME]
    manifest = run_manifest(  # what produced the run, as for any run (DESIGN 3.6)
        provider="none",
        model="none",
        soul=None,
        tools=[tool_entry(t) for t in specs],
        context_digest=None,
        limits={"rounds": 0},
        version=__version__,
    )
    started = {"prompt": prompt, "soul": None, "budget": {"rounds": 0}, "tools": [NAME]}
    run = host.runs.start_local(
        session_id=session_id,
        started={**started, "manifest": manifest, "peer": None, "parent": None},
        tool_names=[NAME],
        work=work,
    )
    await progress(f"run {run.run_id}: waiting for a person to decide in JupyterLab")
    idle = host.config.keepalive_interval
    async for event in run.watch(0, idle=idle):
        if event is None:
            await progress("still waiting for a person to decide in JupyterLab")
        elif event.type == "notebook.decision":
            await progress(f"the person {event.data.get('decision')} the cells")
    result = outcome.get("result")
    text = result.output if result is not None else f"{NAME}: the run ended {run.reason}"
    structured = {
        "run_id": run.run_id,
        "session_id": session_id,
        "accepted": bool(result is not None and result.ok),
    }
    content: list[dict[str, Any]] = [{"type": "text", "text": text}]
    for mime, data in ((result.mime or {}) if result is not None else {}).items():
        if mime.startswith("image/") and isinstance(data, str):
            content.append({"type": "image", "data": data, "mimeType": mime})
    # a rejection is an answer, not a failure: only a run that ended undecided is an error
    return {"content": content, "structuredContent": structured, "isError": result is None}
