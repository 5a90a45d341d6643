"""What each builtin tool name runs: in the session's scratch kernel (``python`` as a cell, the
others through the kernel_tools bridge), and the trusted tools in the gateway that a run owns
(``web_fetch``, ``artifacts.promote``, ``subagents.delegate``). The user's-notebook tools are
``notebook/tools.py``'s."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Protocol

from kernel_tools.registry import implemented_names as kernel_tool_names

from ..config import Resolve
from ..contracts.bodies import ChatRequest, ToolCallRequest, ToolResult
from ..contracts.errors import ResolveError
from ..contracts.permissions import RunPermissions
from ..scratch.kernels import ScratchKernelUnavailable
from ..scratch.pool import ScratchKernels
from ..tools.catalog import ToolSchema
from ..tools.dispatch import Implementation, ToolDispatcher, bind
from ..tools.kernel import PythonBinder, PythonBinding, run_bridged, run_python
from ..tools.web_fetch import web_fetch
from .manager import RunManager
from .request import RunRequest
from .run import Run
from .start import run_permissions
from .tool_output import LiveOutput

if TYPE_CHECKING:
    from ..artifacts import Artifacts

MAX_DELEGATIONS = 3


class ToolHost(Protocol):
    """What the builtin tools need: the runs, the scratch kernels, the artifact store, and
    starting a run (a delegation)."""

    config: Resolve
    runs: RunManager
    kernels: ScratchKernels

    @property
    def artifacts(self) -> Artifacts: ...

    def schema(self, name: str) -> ToolSchema | None: ...

    def start_run(self, request: RunRequest) -> Run: ...


def register_builtin_tools(
    tools: ToolDispatcher, host: ToolHost, bind_python: PythonBinder | None = None
) -> None:
    """Register every builtin and the run's trusted tools on ``tools``; ``bind_python`` says
    where a run's python reads and what it loads (a notebook chat's: notebook/binding.py)."""
    for name in sorted(kernel_tool_names()):
        tools.register(name, kernel_tool(host, name, bind_python))
    for name, tool in GATEWAY_TOOLS.items():
        tools.register(name, bind(host, tool))


def kernel_tool(
    host: ToolHost, name: str, bind_python: PythonBinder | None = None
) -> Implementation:
    """A builtin run in the scratch kernel of the run's session."""

    async def call(request: ToolCallRequest) -> ToolResult:
        try:
            return await _run_in_kernel(host, name, request, bind_python)
        except ScratchKernelUnavailable as exc:  # no kernel to run it in: the model is told why
            return ToolResult(ok=False, output=f"{name}: {exc}")

    return call


async def _run_in_kernel(
    host: ToolHost, name: str, request: ToolCallRequest, bind_python: PythonBinder | None
) -> ToolResult:
    """The call in the session's kernel; what it prints and displays meanwhile goes to the
    run's clients as ``tool.output`` (runs/tool_output.py), all of it before tool.completed."""
    run = host.runs.get(request.run_id)
    permissions = run_permissions(run)
    refused = _unsandboxed_refusal(host, name, permissions)
    if refused is not None:
        return refused
    # started for the run's permissions: sandboxed, the server root is there only for a
    # caller who may read contents (DESIGN 10.1)
    kernel = await host.kernels.get(run.session_id, permissions)
    timeout = host.config.tool_timeout
    call_id = request.call_id
    live = LiveOutput(run.emit_all, call_id)
    try:
        if name == "python":
            code = request.arguments.get("code")
            if not isinstance(code, str):
                return ToolResult(ok=False, output="python: 'code' must be a string")
            bound = PythonBinding() if bind_python is None else await bind_python(run, call_id)
            result = await run_python(kernel, code, timeout, live.add, bound.folder, bound.preload)
            if bound.notes:
                result.output = "\n".join([*bound.notes, result.output])
            return result
        arguments = dict(request.arguments)
        if name == "shell":
            arguments.setdefault("timeout", timeout)
        return await run_bridged(kernel, name, arguments, timeout, live.add)
    finally:
        live.close()  # what waits is sent now: before tool.completed, or run.completed


def _unsandboxed_refusal(
    host: ToolHost, name: str, permissions: RunPermissions
) -> ToolResult | None:
    """Unsandboxed, code the agent runs reaches what the server's user can: a run not offered
    python or shell for that (runs/start.py) cannot call them another way either (an external
    agent's terminal runs as the shell tool)."""
    schema = host.schema(name)
    needs = schema.needs_unsandboxed if schema is not None else ()
    missing = [need for need in needs if not getattr(permissions, need)]
    if host.kernels.isolated or not missing:
        return None
    return ToolResult(
        ok=False,
        output=f"{name}: not run: scratch kernels are not sandboxed (c.Resolve.sandbox), so "
        f"this code would run as the server's user, and the caller may not "
        f"{', '.join(m.replace('_', ' ') for m in missing)}",
    )


async def promote(host: ToolHost, request: ToolCallRequest) -> ToolResult:
    """``artifacts.promote {path, title?, note?}``: a scratch file of the run's session."""
    run = host.runs.get(request.run_id)
    path = request.arguments.get("path")
    if isinstance(path, str):  # a kernel on the gateway keeps work/ there: copied here first
        problem = await host.kernels.bring_back(
            run.session_id, path, host.config.max_artifact_bytes
        )
        if problem is not None:
            return ToolResult(ok=False, output=f"artifacts.promote: {problem}")
    seq = run.events[-1].seq if run.events else 0
    return host.artifacts.promote_for_agent(
        request, session_id=run.session_id, run_seq=seq, owner=run.owner
    )


async def fetch(host: ToolHost, request: ToolCallRequest) -> ToolResult:
    """``web_fetch {url}``."""
    url = request.arguments.get("url")
    if not isinstance(url, str):
        return ToolResult(ok=False, output="web_fetch: 'url' must be a string")
    return await web_fetch(url, allow_private=host.config.allow_private_fetch)


async def delegate(host: ToolHost, request: ToolCallRequest) -> ToolResult:
    """``subagents.delegate {soul, prompt}``: a child run, depth 1, three per run."""
    run = host.runs.get(request.run_id)
    soul, prompt = request.arguments.get("soul"), request.arguments.get("prompt")
    if not isinstance(soul, str) or not isinstance(prompt, str) or not prompt.strip():
        return ToolResult(ok=False, output="subagents.delegate: needs 'soul' and 'prompt'")
    if run.parent is not None:
        return ToolResult(
            ok=False,
            output="subagents.delegate: a delegated run cannot delegate again (depth 1)",
        )
    if run.delegations >= MAX_DELEGATIONS:
        return ToolResult(
            ok=False, output="subagents.delegate: this run has used its 3 delegations"
        )
    run.delegations += 1
    child_request = ChatRequest.model_validate(
        {
            "messages": [{"role": "user", "content": prompt}],
            "soul": soul,
            "session_id": run.session_id,
        }
    )
    try:
        child = host.start_run(
            RunRequest(
                child_request,
                parent=run.run_id,
                exclude_tools=("subagents.delegate",),
                permissions=run_permissions(run),  # its parent's, never more
                owner=run.owner,  # its parent's starter
            )
        )
    except ResolveError as exc:
        return ToolResult(ok=False, output=f"subagents.delegate: {exc.message}")
    if child.task is not None:
        try:
            await asyncio.shield(child.task)
        except asyncio.CancelledError:  # the parent run ended: its child ends cancelled first
            await host.runs.cancel(child.run_id)
            raise
    text = child.text() or (child.events[-1].data.get("summary") or {}).get("text", "")
    return ToolResult(
        ok=child.reason == "stop",
        output=f"[{soul} run {child.run_id}, {child.reason}]\n{text}",
    )


GATEWAY_TOOLS: dict[str, Callable[[ToolHost, ToolCallRequest], Awaitable[ToolResult]]] = {
    "web_fetch": fetch,
    "artifacts.promote": promote,
    "subagents.delegate": delegate,
}
"""The trusted tools a run owns, run by the gateway itself (list 4 of DESIGN 3.4, with the
kernel_tools registry and notebook/tools.py's)."""
