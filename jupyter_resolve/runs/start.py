"""Starting a run: soul, tools, system prompt, budgets and the frozen run manifest."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Protocol

from .._version import __version__
from ..config import Resolve
from ..contracts.bodies import AgentChatBody, ChatRequest
from ..contracts.budget import Limits
from ..contracts.chat_body import assemble_chat, continues_session
from ..contracts.compaction import summary_room
from ..contracts.context import Assembly, answer_room, context_window, estimate, tools_tokens
from ..contracts.errors import BadRequest, Unavailable
from ..contracts.models import choose_model
from ..contracts.notebook import mention_block
from ..contracts.run_manifest import run_manifest
from ..contracts.transcript import transcript_digest
from ..providers.base import Provider
from ..scratch.pool import ScratchKernels
from ..souls import Soul
from ..tools.toolset import ToolSet
from .compaction import Prepare, summarizing
from .instructions import project_instructions
from .manager import RunManager, new_id
from .run import Run
from .transcript import SessionHistory, SessionTranscripts


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


def start_chat(
    gateway: RunHost,
    request: ChatRequest,
    *,
    peer: str | None = None,
    parent: str | None = None,
    exclude_tools: tuple[str, ...] = (),
    task_id: str | None = None,
    only_tools: tuple[str, ...] | None = None,
) -> Run:
    """Start one run for ``request``; raises BadRequest (unknown soul, bad attachment) or
    Unavailable (tool-list drift).

    ``only_tools`` (not None) caps the run's tools to those names (a peer's grant: empty means
    none, a model-only answer); ``exclude_tools`` takes names out. A run delegated by a peer's
    run never gets a tool its parent did not have."""
    toolset = gateway.toolset()  # computed once for every run until the catalogue changes
    drift = toolset.drift
    if drift:
        raise Unavailable(
            "chat is off because the tool lists drifted (run `jupyter resolve check`): "
            + "; ".join(drift),
            code="tool_drift",
        )
    config = gateway.config
    soul = None
    if request.soul:
        soul = gateway.souls.get(request.soul)
        if soul is None:
            known = ", ".join(sorted(gateway.souls))
            raise BadRequest(f"soul: no soul named '{request.soul}' (known: {known})")
    if parent is not None:
        parent_run = gateway.runs.runs.get(parent)
        if parent_run is not None and parent_run.peer is not None:
            inherited = set(parent_run.tool_names)
            only_tools = tuple(
                n
                for n in (parent_run.tool_names if only_tools is None else only_tools)
                if n in inherited
            )
    allowed = [
        n
        for n in toolset.allowed
        if n not in exclude_tools and (only_tools is None or n in only_tools)
    ]
    tools = toolset.select(soul.tool_names(allowed) if soul else allowed)
    names = [t["function"]["name"] for t in tools]
    session_id = request.session_id or new_id("session")
    # the folders are made when something goes in: here, or when the session's kernel starts
    materializing = bool(request.attachments or request.notebook)
    workspace = gateway.kernels.workspace(session_id, create=materializing)
    if materializing:
        paths = [*request.attachments, *([request.notebook] if request.notebook else [])]
        workspace.materialize(gateway.root_dir, paths, gateway.log)
    context_digest = workspace.context_digest()  # from the gateway's record, not the session
    limits = Limits(
        rounds=soul.rounds if soul else config.max_rounds,
        tool_calls=config.max_tool_calls,
        seconds=config.max_seconds,
        tokens=config.max_tokens,
        cost=config.max_cost,
    )
    model = choose_model(request.model, config.allowed_models, config.resolved_model())
    run_id = new_id("run")
    # A chat of a known session that sends only the new message continues the session's
    # transcript (a task's steps too: they see the conversation, and are not turns of it); a
    # delegation takes only its prompt.
    history = SessionHistory()
    continuing = request.session_id is not None and parent is None and continues_session(request)
    if continuing:
        history = gateway.transcripts.history(session_id)
    instructions = project_instructions(gateway.root_dir, request.notebook, gateway.log)
    body, assembly = assemble_chat(
        request,
        run_id=run_id,
        model=model,
        tools=tools,
        discipline=toolset.discipline(names),
        soul_prompt=soul.system_prompt() if soul else "",
        rounds=limits.rounds,
        instructions=instructions,
        transcript=history.messages if continuing else None,
        window=config.context_tokens,
        ratio=history.ratio,
        summarize=config.compaction_summaries,
    )
    if request.mentions:
        undescribed = [m.name for m in request.mentions if m.description is None]
        if undescribed:
            raise BadRequest(f"mentions: {', '.join(undescribed)} not described")
        body.message = mention_block(body.message, request.mentions)
    used = [{"path": i.path, "sha256": i.sha256, "cut": i.cut} for i in instructions]
    sent_digest = transcript_digest(body.history) if continuing else None
    manifest = run_manifest(
        provider=config.provider,
        model=model,
        soul=soul.name if soul else None,
        tools=[toolset.manifest_entries[n] for n in names],
        context_digest=context_digest,
        limits=limits.model_dump(),
        version=__version__,
        instructions=used,
        transcript_digest=sent_digest,
    )
    tokens_estimate = estimate(
        body.system, body.history, body.message, ratio=history.ratio
    ) + tools_tokens(toolset.tools_chars(names), history.ratio)
    started = {
        "session_id": session_id,
        "prompt": body.message,  # the run log keeps what was asked, for replay elsewhere
        "soul": soul.name if soul else None,
        "model": model,
        "budget": limits.model_dump(),
        "tools": names,
        "manifest": manifest,
        "peer": peer,
        "parent": parent,
        "task_id": task_id,  # a step of this task (role chain)
        "context": {
            "instructions": used,
            "transcript_sha256": sent_digest,
            "history_messages": len(body.history),
            "tokens_estimate": tokens_estimate,
            "ratio": round(history.ratio, 4),
        },
    }
    if request.mentions:  # what the model was told, for clients to show
        started["mentions"] = [m.model_dump() for m in request.mentions]
    run = gateway.runs.start(
        body,
        session_id=session_id,
        soul=soul.name if soul else None,
        limits=limits,
        started=started,
        tool_names=names,
        peer=peer,
        parent=parent,
        prepare=_summarize_step(gateway, assembly, history, model),
    )
    run.window, run.ratio = context_window(model, config.context_tokens), history.ratio
    run.notebook = request.notebook
    compacted = assembly.compacted if assembly is not None else None
    if compacted is not None and assembly is not None and not assembly.dropped_turns:
        # before the first frame: the drive task has not run yet
        run.emit("context.compacted", compacted)
    return run


def _summarize_step(
    gateway: RunHost, assembly: Assembly | None, history: SessionHistory, model: str
) -> Prepare | None:
    """The run's first step when fitting dropped turns: summarize them (or, when summaries are
    off, just log the compaction)."""
    if assembly is None or not assembly.dropped_turns:
        return None
    dropped = history.turn_runs[: assembly.dropped_turns]
    # a summary among the dropped turns stands for its runs: the new one stands for them too
    covered = [*(history.summarized if None in dropped else ()), *(r for r in dropped if r)]
    config = gateway.config
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
        gateway.provider,
        assembly,
        covered_runs=covered,
        window_budget=budget,
        room=summary_room(budget),
        timeout=config.provider_timeout,
        ratio=history.ratio,
        log=gateway.log,
    )
