"""The user's-notebook tools (DESIGN 9.2), run by the gateway: ``notebook_variables``,
``inspect_variable``, ``snapshot_variable`` and ``notebook_propose``; ``notebook_read`` through
the server's contents manager (DESIGN 10.1: hidden files and custom managers apply); and what
the public API needs of the same kernels (the variables listing, describing ``@name`` mentions,
a decision).

In a notebook chat (the request named ``notebook``) the tools default their ``notebook``
argument to it, so the model need not type the path.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import shutil
import tempfile
from collections.abc import Awaitable, Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

from pydantic import ValidationError

from ..config import Resolve
from ..contracts.authorship import accepted
from ..contracts.bodies import ChatRequest, ToolCallRequest, ToolResult
from ..contracts.errors import BadRequest, Conflict, ResolveError, Unavailable
from ..contracts.notebook import (
    NotebookArguments,
    ProposalDecisionRequest,
    ProposalOutcome,
    ProposeArguments,
    decision_text,
)
from ..rooms import source_digest
from ..runs.manager import RunManager
from ..scratch.pool import ScratchKernels
from ..tools.dispatch import Implementation, ToolDispatcher, bind
from .kernels import UserKernels
from .proposals import Proposal, Proposals, check_target, outputs_text, released


class NotebookHost(Protocol):
    """What the notebook tools need: the runs, the scratch and user kernels, the proposals."""

    config: Resolve
    runs: RunManager
    kernels: ScratchKernels
    state_dir: Path
    user_kernels: UserKernels | None
    proposals: Proposals


def register_notebook_tools(tools: ToolDispatcher, host: NotebookHost) -> None:
    """The user's-notebook tools on ``tools``, run by the gateway with ``host``'s services."""
    for name, tool in NOTEBOOK_TOOLS.items():
        tools.register(name, bind(host, tool))
    in_kernel = tools.implementation("notebook_read")
    if in_kernel is not None:  # outside a Jupyter server it stays the scratch kernel's
        tools.register("notebook_read", _notebook_read(host, in_kernel))


def _notebook_read(host: NotebookHost, in_kernel: Implementation) -> Implementation:
    async def call(request: ToolCallRequest) -> ToolResult:
        if host.user_kernels is None:
            return await in_kernel(request)
        return await notebook_read(host, request)

    return call


async def notebook_read(host: NotebookHost, request: ToolCallRequest) -> ToolResult:
    """``notebook_read {path}``: the notebook as text, read through the contents manager."""
    from kernel_tools.notebook import render
    from kernel_tools.result import truncate

    path = request.arguments.get("path")
    if not isinstance(path, str) or not path:
        return ToolResult(ok=False, output="notebook_read: 'path' must be a non-empty string")
    try:
        notebook = await _user_kernels(host).read_notebook(path)
    except ResolveError as exc:
        return _failed(request.name, exc)
    return ToolResult(ok=True, output=truncate(render(notebook, path)))


def _user_kernels(host: NotebookHost) -> UserKernels:
    if host.user_kernels is None:
        raise Unavailable("the user's notebooks are reachable only inside a Jupyter server")
    return host.user_kernels


def _arguments(host: NotebookHost, request: ToolCallRequest, model: Any) -> Any:
    """The call's arguments as ``model``, ``notebook`` defaulting to the chat's notebook."""
    arguments = dict(request.arguments)
    run = host.runs.get(request.run_id)
    if not arguments.get("notebook") and run.notebook:
        arguments["notebook"] = run.notebook
    try:
        return model.model_validate(arguments)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        raise BadRequest(f"{request.name}: {where}: {err['msg']}") from exc


async def _kernel_of(host: NotebookHost, notebook: str) -> tuple[str, str]:
    """The notebook's contents path and its running kernel (Conflict when none runs)."""
    user = _user_kernels(host)
    path = await user.check_notebook(notebook)
    kernel_id = await user.kernel_id(path)
    if kernel_id is None:
        raise Conflict(f"no kernel is running for {path}: open it and run a cell first")
    return path, kernel_id


async def _inspect(host: NotebookHost, notebook: str, request: dict[str, Any]) -> dict[str, Any]:
    _, kernel_id = await _kernel_of(host, notebook)
    timeout = host.config.notebook_inspect_timeout
    return await _user_kernels(host).inspect(kernel_id, request, timeout)


def _failed(name: str, exc: ResolveError) -> ToolResult:
    return ToolResult(ok=False, output=f"{name}: {exc.message}")


async def notebook_variables(host: NotebookHost, request: ToolCallRequest) -> ToolResult:
    """``notebook_variables {notebook}``: names, types and shapes in the notebook's kernel."""
    try:
        args = _arguments(host, request, NotebookArguments)
        answer = await _inspect(host, args.notebook, {"op": "variables"})
    except ResolveError as exc:
        return _failed(request.name, exc)
    if not answer.get("ok"):
        return ToolResult(ok=False, output=f"notebook_variables: {answer.get('error')}")
    lines = [
        f"{v['name']}: {v['type']}"
        + (f" {tuple(v['shape'])}" if "shape" in v else "")
        + (f" — {v['summary']}" if v.get("summary") and v["summary"] != v["type"] else "")
        for v in answer["variables"]
    ]
    return ToolResult(ok=True, output="\n".join(lines) or "(no variables in the kernel)")


async def inspect_variable(host: NotebookHost, request: ToolCallRequest) -> ToolResult:
    """``inspect_variable {notebook, name}``: a bounded description."""
    try:
        args = _arguments(host, request, NotebookArguments)
        if not args.name:
            raise BadRequest("inspect_variable: 'name' is needed")
        answer = await _inspect(host, args.notebook, {"op": "describe", "name": args.name})
    except ResolveError as exc:
        return _failed(request.name, exc)
    if not answer.get("ok"):
        return ToolResult(ok=False, output=f"inspect_variable: {answer.get('error')}")
    return ToolResult(ok=True, output=str(answer["description"]))


async def snapshot_variable(host: NotebookHost, request: ToolCallRequest) -> ToolResult:
    """``snapshot_variable {notebook, name}``: a frozen copy in the session's context/."""
    try:
        args = _arguments(host, request, NotebookArguments)
        if not args.name:
            raise BadRequest("snapshot_variable: 'name' is needed")
        run = host.runs.get(request.run_id)
        limit = host.config.snapshot_max_bytes
        answer = await _inspect(
            host, args.notebook, {"op": "snapshot", "name": args.name, "max_bytes": limit}
        )
        if not answer.get("ok"):
            return ToolResult(ok=False, output=f"snapshot_variable: {answer.get('error')}")
        # The bytes come over the kernel protocol (the kernel may be on another machine) into
        # a file of the gateway's, outside every session; it then goes into context/.
        host.state_dir.mkdir(parents=True, exist_ok=True)
        folder = Path(tempfile.mkdtemp(prefix="snapshot-", dir=host.state_dir))
        try:
            written = folder / Path(str(answer["file"])).name
            size = await _receive(host, args.notebook, answer, written, limit)
            workspace = host.kernels.workspace(run.session_id)
            digest = workspace.add_snapshot(written.name, written)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    except ResolveError as exc:
        return _failed(request.name, exc)
    return ToolResult(
        ok=True,
        output=f"{args.name} saved as context/snapshots/{written.name} ({answer['format']}, "
        f"{size} bytes, sha256 {digest}); read it in the python tool, e.g. "
        + _loader(answer["format"], workspace.context / "snapshots" / written.name),
    )


async def _receive(
    host: NotebookHost, notebook: str, answer: dict[str, Any], target: Path, limit: int
) -> int:
    """Read the kernel's kept copy into ``target`` chunk by chunk, check its size and sha256,
    and have the kernel drop it; its size."""
    copy_id, size = str(answer["id"]), int(answer["bytes"])
    try:
        if size > limit:
            raise BadRequest(f"the copy takes {size} bytes, over the limit of {limit}")
        digest = hashlib.sha256()
        with target.open("xb") as out:
            while (offset := out.tell()) < size:
                piece = await _inspect(
                    host, notebook, {"op": "chunk", "id": copy_id, "offset": offset}
                )
                if not piece.get("ok"):
                    raise BadRequest(f"the copy's bytes at {offset}: {piece.get('error')}")
                try:
                    data = base64.b64decode(str(piece.get("data", "")), validate=True)
                except ValueError:
                    data = b""
                if not data or offset + len(data) > size:
                    raise BadRequest(f"the copy's bytes at {offset} did not arrive whole")
                digest.update(data)
                out.write(data)
        if digest.hexdigest() != answer.get("sha256"):
            raise BadRequest("the copy's bytes arrived changed (sha256 differs)")
        return size
    finally:
        with contextlib.suppress(ResolveError):
            await _inspect(host, notebook, {"op": "chunk", "id": copy_id, "drop": True})


def _loader(fmt: str, file: Path) -> str:
    # absolute: a notebook chat's python runs in the notebook's folder, not in work/
    path = repr(str(file))
    return {
        "parquet": f"pandas.read_parquet({path})",
        "npy": f"numpy.load({path})",
    }.get(fmt, f"pickle.load(open({path}, 'rb'))")


async def notebook_propose(host: NotebookHost, request: ToolCallRequest) -> ToolResult:
    """``notebook_propose``: cells for a person to accept or reject; waits for the decision."""
    run = host.runs.get(request.run_id)
    try:
        args: ProposeArguments = _arguments(host, request, ProposeArguments)
        if args.after_cell_id and args.replace_cell_id:
            raise BadRequest("notebook_propose: give after_cell_id or replace_cell_id, not both")
        user = _user_kernels(host)
        path = await user.check_notebook(args.notebook)
        replaced = None
        if args.replace_cell_id:  # as people see it now: the live room's, else the saved cell
            replaced = await user.cell_source(path, args.replace_cell_id)
            check_target(path, "replace_cell_id", args.replace_cell_id, replaced)
        if args.after_cell_id:
            after = await user.cell_source(path, args.after_cell_id)
            check_target(path, "after_cell_id", args.after_cell_id, after)
    except ResolveError as exc:
        return _failed(request.name, exc)
    proposal = host.proposals.open(
        run, request.call_id, path, args.cells, args.replace_cell_id, replaced
    )
    event: dict[str, Any] = {
        "call_id": request.call_id,
        "proposal_id": proposal.proposal_id,
        "notebook": path,
        "cells": [c.model_dump() for c in args.cells],
    }
    for key in ("after_cell_id", "replace_cell_id", "note"):
        if getattr(args, key):
            event[key] = getattr(args, key)
    if replaced is not None:
        event["replaced_source"] = replaced
    run.emit("notebook.proposal", event)
    timeout = host.config.approval_timeout
    outcome = await host.proposals.wait(run, proposal, timeout)
    if outcome is None:
        return released(proposal)
    run.emit("notebook.decision", outcome.event())
    text = decision_text(outcome, path, timeout)
    ran, bundle = outputs_text(outcome, host.config.tool_timeout)
    if ran:
        text += "\nThe accepted cells ran in the notebook's kernel:\n" + ran
    return ToolResult(ok=outcome.decision == "accepted", output=text, mime=bundle)


async def decide_proposal(
    host: NotebookHost,
    run_id: str,
    proposal_id: str,
    body: ProposalDecisionRequest,
    by: Any = None,
) -> ProposalOutcome:
    """``POST /resolve/api/runs/{run_id}/proposals/{proposal_id}``; ``by``, the deciding
    person (a Jupyter identity): accepted cells' authorship names them."""
    run = host.runs.get(run_id)  # NotFound for an unknown run

    async def runner(notebook: str, sources: list[str]) -> Any:
        # Accept and run on a notebook without a kernel starts the one it names (issue 40.3):
        # the person asked to run, and the page opening the notebook attaches to that session.
        user = _user_kernels(host)
        path = await user.check_notebook(notebook)
        kernel_id = await user.kernel_id(path) or await user.start_kernel(path)
        return await user.run_cells(kernel_id, sources, host.config.tool_timeout)

    async def target(proposal: Proposal) -> str | None:
        assert proposal.replace_cell_id is not None
        return await _user_kernels(host).cell_source(proposal.notebook, proposal.replace_cell_id)

    outcome = await host.proposals.decide(run_id, proposal_id, body, runner, target)
    if outcome.decision != "accepted":
        return outcome
    login = str(getattr(by, "username", None) or "")
    authorship = accepted(
        [c.source for c in outcome.cells],
        run_id=run_id,
        call_id=host.proposals.get(run_id, proposal_id).call_id,
        proposal_id=proposal_id,
        model=run.model,
        soul=run.soul,
        by=login,
        by_name=str(getattr(by, "display_name", None) or getattr(by, "name", None) or login),
        at=datetime.now(timezone.utc).isoformat(timespec="milliseconds"),
        edited=outcome.edited,
    )
    return outcome.model_copy(update={"authorship": authorship})


async def proposal_view(host: NotebookHost, run_id: str, proposal_id: str) -> dict[str, Any]:
    """``GET /resolve/api/runs/{run_id}/proposals/{proposal_id}``: the proposal, and for a
    replace the target cell's ``current`` source (the live room's when one is open), so a card
    shown late, or following the cell, diffs against what the cell holds now."""
    host.runs.get(run_id)
    proposal = host.proposals.get(run_id, proposal_id)
    view = proposal.view()
    if proposal.replace_cell_id:
        source = await _user_kernels(host).cell_source(proposal.notebook, proposal.replace_cell_id)
        digest = source_digest(source) if source is not None else None
        view["current"] = {"cell_id": proposal.replace_cell_id, "source": source, "sha256": digest}
    return view


async def variables_listing(host: NotebookHost, notebook: str) -> dict[str, Any]:
    """``GET /resolve/api/notebook/variables``: no running kernel is ``kernel: false``."""
    user = _user_kernels(host)
    path = await user.check_notebook(notebook)
    kernel_id = await user.kernel_id(path)
    if kernel_id is None:
        return {"notebook": path, "kernel": False, "variables": []}
    answer = await user.inspect(
        kernel_id, {"op": "variables"}, host.config.notebook_inspect_timeout
    )
    listing: dict[str, Any] = {"notebook": path, "kernel": True, "variables": []}
    if answer.get("ok"):
        listing["variables"] = answer["variables"]
    else:
        listing["error"] = str(answer.get("error"))
    return listing


async def describe_mentions(host: NotebookHost, request: ChatRequest) -> ChatRequest:
    """The request with every mention described: those without a description are described
    in the notebook's kernel (BadRequest without a notebook, or for an unknown name)."""
    missing = [m for m in request.mentions if m.description is None]
    if not missing:
        return request
    if request.notebook is None:
        raise BadRequest("mentions: describing a variable needs 'notebook' (its kernel)")
    try:
        _, kernel_id = await _kernel_of(host, request.notebook)
    except Conflict as exc:
        raise BadRequest(f"mentions: {exc.message}") from exc
    described = []
    for mention in request.mentions:
        if mention.description is None:
            answer = await _user_kernels(host).inspect(
                kernel_id,
                {"op": "describe", "name": mention.name},
                host.config.notebook_inspect_timeout,
            )
            if not answer.get("ok"):
                raise BadRequest(f"mentions: @{mention.name}: {answer.get('error')}")
            mention = mention.model_copy(update={"description": str(answer["description"])})
        described.append(mention)
    return request.model_copy(update={"mentions": described})


NOTEBOOK_TOOLS: dict[str, Callable[[NotebookHost, ToolCallRequest], Awaitable[ToolResult]]] = {
    "notebook_variables": notebook_variables,
    "inspect_variable": inspect_variable,
    "snapshot_variable": snapshot_variable,
    "notebook_propose": notebook_propose,
}
"""The user's-notebook tools the gateway runs (list 4 of DESIGN 3.4, with runs/builtin_tools.py's
and the kernel_tools registry); ``notebook_read`` is the kernel's, replaced here in a server."""
