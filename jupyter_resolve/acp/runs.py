"""A run driven by an external agent (DESIGN 10.4): a chat whose body names ``agent``.

The run is one the gateway drives itself (:meth:`RunManager.start_local`): ``run.started``
names the agent, then one ACP ``session/prompt`` of the session's agent session feeds it (the
events of :mod:`.events`, each appended to the run log before it is sent), and it ends with
exactly one ``run.completed``: ``stop``, ``budget`` (the agent's own limit, or
``c.Resolve.max_seconds``), ``error`` (the agent could not start, died, refused or failed, with
a ``run.error`` saying so), ``cancelled`` or ``interrupted``. A cancel sends ACP's
``session/cancel`` and waits a little for the agent to wind down; its permission requests still
open are answered ``cancelled``.

Only a caller who may read and write the server's files and run code in kernels is given an
agent (DESIGN 10.1): its own tools are beyond this server's control (a 403
``agent_needs_permissions`` otherwise, naming what is missing).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path
from typing import Any

from .._version import __version__
from ..contracts.bodies import ChatRequest, CompletionReason
from ..contracts.chat_body import message_text
from ..contracts.errors import BadRequest, Forbidden
from ..contracts.notebook import mention_block
from ..contracts.permissions import RunPermissions
from ..contracts.run_manifest import run_manifest
from ..runs.manager import new_id
from ..runs.request import RunRequest
from ..runs.run import Run
from ..runs.start import check_namespace
from .access import agent_refusal
from .agents import AgentHost, AgentProcess, AgentUnavailable
from .events import completion_of, prompt_usage

CANCEL_GRACE = 5.0  # seconds a cancelled prompt may take to answer 'cancelled'


def prompt_of(chat: ChatRequest) -> str:
    """The text the agent is asked: the last user message, and the mentions described."""
    users = [m for m in chat.messages if m.role == "user"]
    if not users:
        raise BadRequest("messages: needs at least one message with role 'user'")
    return mention_block(message_text(users[-1]), chat.mentions)


def prompt_blocks(prompt: str, chat: ChatRequest, root: Path) -> list[Any]:
    """``session/prompt``'s content: the text, then a link to the chat's notebook and each
    attachment (the agent reads them with ``fs/read_text_file``)."""
    from acp import resource_link_block, text_block

    blocks: list[Any] = [text_block(prompt)]
    for path in [*([chat.notebook] if chat.notebook else []), *chat.attachments]:
        where = (root / path.lstrip("/")).as_posix()
        blocks.append(resource_link_block(path, f"file://{where}"))
    return blocks


def start_agent_run(host: AgentHost, agent: AgentProcess, request: RunRequest) -> Run:
    """Start the run (BadRequest for a chat an agent cannot take, Forbidden for a caller who
    may not have one)."""
    refused = agent_refusal(request.permissions)
    if refused is not None:
        raise Forbidden(refused, code="agent_needs_permissions")
    chat = request.chat
    if chat.soul:
        raise BadRequest("soul: an external agent's run has no soul; name 'soul' or 'agent'")
    session_id = chat.session_id or new_id("session")
    check_namespace(request, session_id)
    prompt = prompt_of(chat)
    blocks = prompt_blocks(prompt, chat, host.root_dir)
    limits = {"seconds": host.config.max_seconds}
    manifest = run_manifest(
        provider=f"acp:{agent.name}",
        model="none",
        soul=None,
        tools=[],
        context_digest=None,
        limits=limits,
        version=__version__,
    )
    started: dict[str, Any] = {
        "prompt": prompt,
        "soul": None,
        "agent": agent.name,
        "budget": limits,
        "tools": [],
        "manifest": manifest,
        "peer": request.peer,
        "parent": request.parent,
        "owner": request.owner,  # the chat's caller
        "task_id": request.task_id,
        "permissions": request.permissions.model_dump(),
    }
    if chat.mentions:
        started["mentions"] = [m.model_dump() for m in chat.mentions]
    turn = AgentTurn(host, agent, session_id, request.permissions, request.peer is not None)
    turn.owner = request.owner

    async def work(run: Run) -> CompletionReason:
        return await turn.drive(run, blocks)

    return host.runs.start_local(session_id=session_id, started=started, tool_names=[], work=work)


class AgentTurn:
    """One prompt of the agent for one run."""

    def __init__(
        self,
        host: AgentHost,
        agent: AgentProcess,
        session_id: str,
        permissions: RunPermissions,
        headless: bool,
    ) -> None:
        self.host = host
        self.agent = agent
        self.session_id = session_id
        self.permissions = permissions
        self.headless = headless
        self.owner: str | None = None  # who started the run (one caller at a time: gate.py)

    @property
    def log(self) -> logging.Logger:
        return self.host.log

    def error(self, run: Run, code: str, message: str) -> CompletionReason:
        run.emit("run.error", {"code": code, "message": message})
        return "error"

    async def drive(self, run: Run, blocks: list[Any]) -> CompletionReason:
        """The run's body; every failure is a ``run.error`` (a cancel propagates)."""
        try:
            return await self._drive(run, blocks)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # never a run without its reason
            self.log.exception("external agent run %s failed", run.run_id)
            return self.error(run, "internal", f"{type(exc).__name__}: {exc}")

    async def _drive(self, run: Run, blocks: list[Any]) -> CompletionReason:
        name = self.agent.name
        caller = (self.owner, tuple(self.permissions.model_dump().items()))
        async with self.agent.gate.turn(caller), self.agent.one_turn_at_a_time(self.session_id):
            try:
                conn = await self.agent.ensure()
            except AgentUnavailable as exc:
                return self.error(run, "agent_unavailable", f"the external agent '{name}': {exc}")
            endpoint = self.agent.mcp
            token = endpoint.token_for(run.run_id) if endpoint is not None else None
            try:
                return await self._turn(run, conn, blocks, token.servers() if token else [])
            finally:
                if token is not None:
                    token.revoke()  # the turn's token ends with it

    async def _turn(
        self, run: Run, conn: Any, blocks: list[Any], servers: list[Any]
    ) -> CompletionReason:
        """The session opened with the turn's MCP ``servers``, the turn registered for the
        client's requests, and the prompt."""
        from acp import RequestError

        from .client import Turn
        from .terminal import Terminals

        try:
            agent_session = await self.agent.open_session(conn, self.session_id, servers)
        except RequestError as exc:
            return self.error(run, "agent_error", f"'{self.agent.name}' refused the session: {exc}")
        except ConnectionError:
            return await self.died(run)
        turn = Turn(run, self.session_id, self.permissions, self.headless, self.host.root_dir)
        if self.host.config.acp_terminal:
            turn.terminals = Terminals(self.host, run)
        self.agent.turns[agent_session] = turn
        try:
            return await self.prompt(run, conn, agent_session, blocks)
        finally:
            self.agent.turns.pop(agent_session, None)
            if turn.terminals is not None:
                await turn.terminals.close()

    async def prompt(
        self, run: Run, conn: Any, agent_session: str, blocks: list[Any]
    ) -> CompletionReason:
        from acp import RequestError

        task = asyncio.ensure_future(conn.prompt(session_id=agent_session, prompt=blocks))
        seconds = self.host.config.max_seconds
        try:
            done, _ = await asyncio.wait({task}, timeout=seconds)
        except asyncio.CancelledError:
            await asyncio.shield(cancel_prompt(conn, agent_session, task))
            raise
        if not done:
            await cancel_prompt(conn, agent_session, task)
            run.emit("run.error", {"code": "budget", "message": f"stopped after {seconds:g} s"})
            return "budget"
        try:
            answer = task.result()
        except RequestError as exc:
            message = f"'{self.agent.name}' answered session/prompt with an error: {exc}"
            return self.error(run, "agent_error", message)
        except ConnectionError:
            return await self.died(run)
        wire = answer.model_dump(mode="json", by_alias=True, exclude_none=True)
        usage = prompt_usage(wire.get("usage"))
        reason, error = completion_of(answer.stop_reason)
        run.emit_all([e for e in (usage, error) if e is not None])
        return reason

    async def died(self, run: Run) -> CompletionReason:
        why = await self.agent.exited(within=2.0) or "the connection closed"
        message = f"the external agent '{self.agent.name}' stopped during this run: {why}"
        return self.error(run, "agent_died", message)


async def cancel_prompt(conn: Any, agent_session: str, task: asyncio.Future[Any]) -> None:
    """ACP's cancel: ``session/cancel``, then up to :data:`CANCEL_GRACE` seconds for the prompt
    to answer (its last updates still reach the run), then the request is dropped."""
    with contextlib.suppress(Exception):
        await conn.cancel(session_id=agent_session)
    done, _ = await asyncio.wait({task}, timeout=CANCEL_GRACE)
    if not done:
        task.cancel()
    with contextlib.suppress(BaseException):
        task.result()  # retrieved: a failure here is not news
