"""Starting a run from its :class:`RunRequest`: soul, tools, system prompt, budgets and the
frozen run manifest."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from .._version import __version__
from ..config import Resolve
from ..contracts.bodies import AgentChatBody, ChatRequest
from ..contracts.budget import Limits
from ..contracts.chat_body import assemble_chat, continues_session
from ..contracts.compaction import summary_room
from ..contracts.context import (
    Assembly,
    Instruction,
    answer_room,
    context_window,
    estimate,
    tools_tokens,
)
from ..contracts.discipline import notebook_discipline
from ..contracts.errors import BadRequest, Unavailable
from ..contracts.ids import PEER_SESSION_PREFIX
from ..contracts.models import choose_model
from ..contracts.notebook import mention_block
from ..contracts.permissions import RunPermissions, permitted
from ..contracts.run_manifest import run_manifest
from ..contracts.transcript import transcript_digest
from ..providers.base import Provider
from ..scratch.pool import ScratchKernels
from ..souls import Soul
from ..tools.toolset import ToolSet
from .compaction import Prepare, summarizing
from .instructions import project_instructions
from .manager import RunManager, new_id
from .request import RunRequest
from .run import Run
from .transcript import SessionHistory, SessionTranscripts, refuse_other_session


class RunHost(Protocol):
    """What starting a run needs of the gateway."""

    config: Resolve
    root_dir: Path
    log: logging.Logger
    souls: dict[str, Soul]
    runs: RunManager
    provider: Provider
    kernels: ScratchKernels
    transcripts: SessionTranscripts

    def toolset(self) -> ToolSet: ...


@dataclass
class _Plan:
    """What a run's start decided before its body is assembled."""

    toolset: ToolSet
    soul: Soul | None
    tools: list[dict[str, Any]]
    names: list[str]
    session_id: str
    context_digest: str | None
    limits: Limits
    model: str
    history: SessionHistory
    continuing: bool  # the session's transcript goes first
    instructions: list[Instruction]
    permissions: RunPermissions


def start_run(host: RunHost, request: RunRequest) -> Run:
    """Start one run for ``request``; raises BadRequest (unknown soul, bad attachment) or
    Unavailable (tool-list drift)."""
    plan = _plan(host, request)
    body, assembly = _assemble(host, request.chat, plan)
    manifest, context = _record(host.config, plan, body)
    # the state a step left (contracts.context): the next round and turn keep it
    context["elided_tools"] = assembly.elided_tools if assembly is not None else 0
    skipped = plan.history.left_out_for(host.config.compaction_summaries)
    context["left_out_messages"] = skipped + (len(assembly.dropped) if assembly else 0)
    soul = plan.soul.name if plan.soul else None
    run = host.runs.start(
        body,
        session_id=plan.session_id,
        soul=soul,
        limits=plan.limits,
        started=_started(request, plan, body, manifest, context),
        tool_names=plan.names,
        peer=request.peer,
        parent=request.parent,
        prepare=_summarize_step(host, assembly, plan.history, plan.model),
    )
    run.window = context_window(plan.model, host.config.context_tokens)
    run.ratio = plan.history.ratio
    run.elided_tools = context["elided_tools"]
    run.notebook = request.chat.notebook
    compacted = assembly.compacted if assembly is not None else None
    if compacted is not None and assembly is not None and not assembly.dropped_turns:
        # before the first frame: the drive task has not run yet
        run.emit("context.compacted", compacted)
    return run


def _plan(host: RunHost, request: RunRequest) -> _Plan:
    toolset = host.toolset()  # computed once for every run until the catalogue changes
    if toolset.drift:
        raise Unavailable(
            "chat is off because the tool lists drifted (run `jupyter resolve check`): "
            + "; ".join(toolset.drift),
            code="tool_drift",
        )
    chat, config = request.chat, host.config
    soul = _soul(host, chat.soul)
    permissions = _permissions(host, request, toolset)
    # unsandboxed, code the agent runs reaches what the server's user can: python and shell need
    # every permission (the schemas' needs_unsandboxed)
    needs = toolset.needs(sandboxed=host.kernels.isolated)
    names = permitted(_tool_names(host, request, toolset.allowed, soul), permissions, needs)
    tools = toolset.select(names)
    session_id = chat.session_id or new_id("session")
    check_namespace(request, session_id)
    if chat.session_id is not None and request.parent is None and not request.others:
        refuse_other_session(host.runs, chat.session_id, request.owner)  # DESIGN 10.2
    context_digest = _materialize(host, chat, session_id)
    limits = Limits(
        rounds=soul.rounds if soul else config.max_rounds,
        tool_calls=config.max_tool_calls,
        seconds=config.max_seconds,
        tokens=config.max_tokens,
        cost=config.max_cost,
    )
    model = choose_model(chat.model, config.allowed_models, config.resolved_model())
    # A chat of a known session that sends only the new message continues the session's
    # transcript (a task's steps too: they see the conversation, and are not turns of it); a
    # delegation takes only its prompt.
    history = SessionHistory()
    continuing = chat.session_id is not None and request.parent is None and continues_session(chat)
    if continuing:
        history = host.transcripts.history(session_id)
    return _Plan(
        toolset=toolset,
        soul=soul,
        tools=tools,
        names=[t["function"]["name"] for t in tools],
        session_id=session_id,
        context_digest=context_digest,
        limits=limits,
        model=model,
        history=history,
        continuing=continuing,
        instructions=project_instructions(host.root_dir, chat.notebook, host.log),
        permissions=permissions,
    )


def check_namespace(request: RunRequest, session_id: str) -> None:
    """Only a peer's runs (and the steps and delegations they start) live in a peer's
    namespace: a person's chat there would read turns a peer planted, and add to them."""
    mine = request.peer is not None or request.parent is not None or request.task_id is not None
    if session_id.startswith(PEER_SESSION_PREFIX) and not mine:
        raise BadRequest(
            f"session_id: '{session_id}' is in the A2A peers' namespace "
            f"(ids starting with '{PEER_SESSION_PREFIX}'); choose another id",
            code="peer_session",
        )


def _assemble(
    host: RunHost, chat: ChatRequest, plan: _Plan
) -> tuple[AgentChatBody, Assembly | None]:
    """The runtime's request body (contracts/chat_body.py), the mentions described in it."""
    config = host.config
    skip = plan.history.left_out_for(config.compaction_summaries)  # a step left them out
    body, assembly = assemble_chat(
        chat,
        run_id=new_id("run"),
        model=plan.model,
        tools=plan.tools,
        discipline=_discipline(host, chat, plan),
        soul_prompt=plan.soul.system_prompt() if plan.soul else "",
        rounds=plan.limits.rounds,
        instructions=plan.instructions,
        transcript=plan.history.messages[skip:] if plan.continuing else None,
        window=config.context_tokens,
        ratio=plan.history.ratio,
        summarize=config.compaction_summaries,
        elided_tools=plan.history.elided_for(config.compaction_summaries),
    )
    if chat.mentions:
        undescribed = [m.name for m in chat.mentions if m.description is None]
        if undescribed:
            raise BadRequest(f"mentions: {', '.join(undescribed)} not described")
        body.message = mention_block(body.message, chat.mentions)
    return body, assembly


def _discipline(host: RunHost, chat: ChatRequest, plan: _Plan) -> str:
    """The tool set's discipline, and a notebook chat's lines on where its python reads and
    writes (notebook/binding.py binds the kernel the same way)."""
    toolset = plan.toolset
    text = toolset.discipline(plan.names)
    if chat.notebook is None or not plan.permissions.contents_read:
        return text
    if not toolset.having("notebook_folder", plan.names):
        return text
    work = host.kernels.workspace(plan.session_id, create=False).work
    loading = toolset.having("loads_mentions", plan.names)
    loaded = [m.name for m in chat.mentions] if loading else []
    file_tools = bool(toolset.having("file_tool", plan.names))
    extra = notebook_discipline(chat.notebook, str(work), loaded, file_tools=file_tools)
    return f"{text}\n{extra}"


def _record(
    config: Resolve, plan: _Plan, body: AgentChatBody
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The frozen run manifest, and ``run.started``'s ``context``."""
    used = [{"path": i.path, "sha256": i.sha256, "cut": i.cut} for i in plan.instructions]
    sent_digest = transcript_digest(body.history) if plan.continuing else None
    manifest = run_manifest(
        provider=config.provider,
        model=plan.model,
        soul=plan.soul.name if plan.soul else None,
        tools=[plan.toolset.manifest_entries[n] for n in plan.names],
        context_digest=plan.context_digest,
        limits=plan.limits.model_dump(),
        version=__version__,
        instructions=used,
        transcript_digest=sent_digest,
    )
    ratio = plan.history.ratio
    tokens_estimate = estimate(body.system, body.history, body.message, ratio=ratio)
    tokens_estimate += tools_tokens(plan.toolset.tools_chars(plan.names), ratio)
    context = {
        "instructions": used,
        "transcript_sha256": sent_digest,
        "history_messages": len(body.history),
        "tokens_estimate": tokens_estimate,
        "ratio": round(ratio, 4),
    }
    return manifest, context


def _soul(host: RunHost, name: str | None) -> Soul | None:
    if not name:
        return None
    soul = host.souls.get(name)
    if soul is None:
        known = ", ".join(sorted(host.souls))
        raise BadRequest(f"soul: no soul named '{name}' (known: {known})")
    return soul


def _tool_names(
    host: RunHost, request: RunRequest, allowed: Sequence[str], soul: Soul | None
) -> list[str]:
    """The names the run may call: the allowed ones, capped by the request (and, for a run a
    peer's run delegated, by its parent's tools), then by the soul, or, when it names none,
    by the provider's lean set (a small local model's)."""
    only_tools = request.only_tools
    if request.parent is not None:
        parent_run = host.runs.runs.get(request.parent)
        if parent_run is not None and parent_run.peer is not None:
            inherited = set(parent_run.tool_names)
            only_tools = tuple(
                n
                for n in (parent_run.tool_names if only_tools is None else only_tools)
                if n in inherited
            )
    names = [
        n
        for n in allowed
        if n not in request.exclude_tools and (only_tools is None or n in only_tools)
    ]
    if soul is not None and soul.tools != "*":
        return soul.tool_names(names)
    lean = host.provider.lean_tools  # a small model's few, when the soul does not say
    return [n for n in names if n in lean] if lean is not None else names


def _permissions(host: RunHost, request: RunRequest, toolset: ToolSet) -> RunPermissions:
    """The caller's permissions; a delegated run's never exceed its parent's. A peer's run
    (A2A) has what the admin's grant implies (``c.Resolve.peer_tools``: ``notebook_read``
    granted is contents read), a Jupyter login's over A2A what its edge asked (none unless)."""
    if request.parent is None:
        if request.peer is not None and request.only_tools is not None:
            # what the grant implies for data (a peer's exec tools need the sandbox: jobs.py)
            return RunPermissions.for_tools(request.only_tools, toolset.needs())
        return request.permissions
    parent_run = host.runs.runs.get(request.parent)
    return request.permissions.within(
        run_permissions(parent_run) if parent_run else RunPermissions()
    )


def run_permissions(run: Run) -> RunPermissions:
    """What ``run.started`` recorded (none for a run that recorded nothing)."""
    started = run.events[0].data if run.events and run.events[0].type == "run.started" else {}
    recorded = started.get("permissions")
    return (
        RunPermissions.model_validate(recorded) if isinstance(recorded, dict) else RunPermissions()
    )


def _materialize(host: RunHost, chat: ChatRequest, session_id: str) -> str | None:
    """The session's context digest, its attachments and notebook put in first."""
    # the folders are made when something goes in: here, or when the session's kernel starts
    materializing = bool(chat.attachments or chat.notebook)
    workspace = host.kernels.workspace(session_id, create=materializing)
    if materializing:
        paths = [*chat.attachments, *([chat.notebook] if chat.notebook else [])]
        workspace.materialize(host.root_dir, paths, host.log)
    return workspace.context_digest()  # from the gateway's record, not the session


def _started(
    request: RunRequest,
    plan: _Plan,
    body: AgentChatBody,
    manifest: dict[str, Any],
    context: dict[str, Any],
) -> dict[str, Any]:
    """``run.started``'s data (DESIGN 3.6)."""
    started: dict[str, Any] = {
        "session_id": plan.session_id,
        "prompt": body.message,  # the run log keeps what was asked, for replay elsewhere
        "soul": plan.soul.name if plan.soul else None,
        "model": plan.model,
        "budget": plan.limits.model_dump(),
        "tools": plan.names,
        "manifest": manifest,
        "peer": request.peer,
        "parent": request.parent,
        "owner": request.owner,  # who started it (the run index's owner, the audit's user)
        "task_id": request.task_id,  # a step of this task (role chain)
        "permissions": plan.permissions.model_dump(),  # the caller's, as the Authorizer said
        "context": context,
    }
    if request.chat.notebook is not None:  # a notebook chat's: where its python read
        started["notebook"] = request.chat.notebook
    if request.chat.mentions:  # what the model was told, for clients to show
        started["mentions"] = [m.model_dump() for m in request.chat.mentions]
    return started


def _summarize_step(
    host: RunHost, assembly: Assembly | None, history: SessionHistory, model: str
) -> Prepare | None:
    """The run's first step when fitting dropped turns: summarize them (or, when summaries are
    off, just log the compaction)."""
    if assembly is None or not assembly.dropped_turns:
        return None
    dropped = history.turn_runs[: assembly.dropped_turns]
    # a summary among the dropped turns stands for its runs: the new one stands for them too
    covered = [*(history.summarized if None in dropped else ()), *(r for r in dropped if r)]
    config = host.config
    if not config.compaction_summaries or not covered:
        compacted = assembly.compacted

        async def log_only(run: Run, body: AgentChatBody) -> AgentChatBody:
            if compacted is not None:
                run.emit("context.compacted", compacted)
            return body

        return log_only
    window = context_window(model, config.context_tokens)
    budget = window - answer_room(window)
    return summarizing(
        host.provider,
        assembly,
        covered_runs=covered,
        window_budget=budget,
        room=summary_room(budget),
        timeout=config.provider_timeout,
        ratio=history.ratio,
        log=host.log,
    )
