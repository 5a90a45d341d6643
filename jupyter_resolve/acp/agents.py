"""The configured external agents (``c.Resolve.acp_agents``), each a process speaking ACP.

An agent starts on its first run, through the official ``agent-client-protocol`` SDK (imported
only then), with its ``env`` over a trimmed environment (``HOME``, ``PATH``, ``USER`` and the
like: no Jupyter, hub or provider secret) and the server root as its working folder. It must
answer ``initialize`` within ``c.Resolve.acp_start_timeout``. One process serves every session:
each session of this project is one ACP session of the agent (``session/load`` after a restart
when the agent offers it; the mapping is kept under ``.resolve/acp-sessions/``). An agent that
fails to start or dies is marked ``error``, with the reason and the tail of its stderr (secrets
withheld) in ``/resolve/api/health``; the next run starts it again. The server's stop stops it.

The process lives in a task of its own (the life cycle of ``supervised.py``: the SDK's context
must be left by the task that entered it); runs talk to it from theirs. Its turns are all of one
caller at a time (gate.py); each turn hands it this server's MCP endpoint with a token of the
turn's own (mcp_offer.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

from .._version import __version__
from ..admin_policy import AppliedPolicy
from ..config import Resolve
from ..contracts.acp_agents import AgentSpec, parse_agents, redact
from ..contracts.errors import BadRequest, Locked
from ..notebook.tools import NotebookHost
from ..supervised import SessionUnavailable, Supervised, missing_sdk
from ..tools.dispatch import ToolDispatcher
from .gate import CallerGate

if TYPE_CHECKING:
    from acp.client.connection import ClientSideConnection

    from .client import Turn
    from .mcp_offer import McpEndpoint

FEATURE = "acp_agents"  # the policy's name for the feature (contracts/admin_policy.py)
SESSIONS = "acp-sessions"  # under the state dir: this project's session → the agent's


class AgentUnavailable(SessionUnavailable):
    """The agent could not be reached: not started, died, or did not answer (a sentence)."""

    code = "agent_unavailable"


class AgentHost(NotebookHost, Protocol):
    """What the external agents need of the gateway: the notebook tools' services (a
    notebook's write is proposed), and these."""

    root_dir: Path
    log: logging.Logger
    tools: ToolDispatcher  # the shell tool, for terminal/* (c.Resolve.acp_terminal)
    policy: AppliedPolicy  # the administrator's (acp_agents switched off: chats are refused)


class AgentProcess(Supervised["ClientSideConnection"]):
    """One configured agent: its process, its state, its sessions, the turns being prompted."""

    KIND, TASK = "external agent", "acp"
    READY, FAILED = "running", "error"  # idle | starting | running | error | stopped
    SLOW_START = "did not answer initialize within"
    UNAVAILABLE = AgentUnavailable

    def __init__(self, name: str, spec: AgentSpec, host: AgentHost) -> None:
        stderr_path = host.state_dir / "acp" / f"{name}.stderr.log"
        timeout = host.config.acp_start_timeout
        super().__init__(name, stderr_path=stderr_path, start_timeout=timeout, log=host.log)
        self.spec = spec
        self.host = host
        self.pid: int | None = None
        self.capabilities: dict[str, Any] = {}  # initialize's agentCapabilities, wire JSON
        self.turns: dict[str, Turn] = {}  # by the agent's session id
        self.sessions: dict[str, str] = {}  # this project's session → the agent's, this process
        self.mcp: McpEndpoint | None = None  # offered in its sessions, a token per turn
        self.gate = CallerGate()  # one caller's turns at a time
        self._process: Any = None
        self._session_locks: dict[str, tuple[asyncio.Lock, list[int]]] = {}

    def withhold(self, text: str) -> str:
        return redact(text, self.spec.secrets())

    def listing(self) -> dict[str, Any]:
        """``GET /resolve/api/agents``' row: idle, running (starting too) or error."""
        shown = {"starting": "running", "stopped": "idle"}.get(self.state, self.state)
        return {
            "name": self.name,
            "description": self.spec.description,
            "state": shown,
            "error": self.error if shown == "error" else None,
        }

    def describe(self) -> dict[str, Any]:
        """Health's entry: the program only (arguments and env may hold secrets)."""
        return {
            **self.listing(),
            "command": self.spec.command[0],
            "starts": self.starts,
            "pid": self.pid if self.state == "running" else None,
            "live_runs": len(self.turns),
            "stderr_tail": self.stderr_tail(),
        }

    def _check(self) -> None:
        try:
            import acp  # noqa: F401  (the SDK, imported on first need)
        except ImportError:
            why = missing_sdk("agent-client-protocol", "acp", "acp_agents")
            raise AgentUnavailable(self.fail(why)) from None

    async def _open(self, stack: contextlib.AsyncExitStack) -> ClientSideConnection:
        """The agent spawned and initialized (its stderr to the file health shows)."""
        from acp import spawn_agent_process

        from .client import AgentClient, Files
        from .mcp_offer import McpEndpoint

        user = self.host.user_kernels
        files = Files(user.contents if user is not None else None)
        timeout = self.host.config.approval_timeout
        client = AgentClient(self.turns, files, timeout, notebooks=self.host)
        command = self.spec.command
        stderr = self.open_stderr(stack)
        conn, self._process = await stack.enter_async_context(
            spawn_agent_process(
                cast("Any", client),  # the SDK's Client protocol, less its unstable methods
                command[0],
                *command[1:],
                env=self.spec.env,
                cwd=str(self.host.root_dir),
                transport_kwargs={"stderr": stderr.fileno()},
            )
        )
        self.pid = self._process.pid
        answer = await conn.initialize(**initialize_params(self.host.config))
        dumped = answer.model_dump(mode="json", by_alias=True, exclude_none=True)
        self.capabilities = dumped.get("agentCapabilities", {})
        self.mcp = McpEndpoint.make(self.host, self.name, self.capabilities)
        return conn

    async def _hold(self) -> None:
        """Until the stop event (the SDK then closes the agent's stdin and gives it 2 s, then
        SIGTERM, 2 s, then SIGKILL) or the process's exit, a failure."""
        process = self._process
        stop = asyncio.create_task(self._stop.wait())
        exited = asyncio.create_task(process.wait())
        try:
            await asyncio.wait({stop, exited}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop.cancel()
        if exited.done() and not self._stop.is_set():
            self.fail(f"exited with code {process.returncode}; it starts again on the next run")
        else:
            exited.cancel()

    def _closed(self) -> None:
        self.pid = self._process = None
        self.sessions.clear()
        self.mcp = None  # each turn revokes its own token

    async def exited(self, within: float) -> str | None:
        """Once the process has gone (waiting up to ``within`` s for it): why, else None."""
        deadline = time.monotonic() + within
        while self.state != "error" and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        return self.error if self.state == "error" else None

    @contextlib.asynccontextmanager
    async def one_turn_at_a_time(self, session_id: str) -> AsyncIterator[None]:
        """One turn at a time per session (ACP prompts a session once at a time); the lock
        is kept while anyone holds or waits for it."""
        entry = self._session_locks.setdefault(session_id, (asyncio.Lock(), [0]))
        lock, users = entry
        users[0] += 1
        try:
            async with lock:
                yield
        finally:
            users[0] -= 1
            if users[0] == 0:
                del self._session_locks[session_id]

    async def open_session(
        self, conn: ClientSideConnection, session_id: str, servers: list[Any]
    ) -> str:
        """The agent's session for this project's ``session_id`` with the turn's MCP
        ``servers``: known to this process (given them again), loaded (``session/load``, when
        the agent offers it) after a restart, else a new one."""
        cwd = str(self.host.root_dir)
        known = self.sessions.get(session_id)
        if known is not None:
            if servers:
                await self._hand_over(conn, known, servers)
            return known
        stored = self._stored(session_id)
        if stored and self.capabilities.get("loadSession"):
            from acp import RequestError

            with contextlib.suppress(RequestError):  # the agent forgot it: a new one
                await conn.load_session(cwd=cwd, session_id=stored, mcp_servers=servers)
                self.sessions[session_id] = stored
                return stored
        answer = await conn.new_session(cwd=cwd, mcp_servers=servers)
        self.sessions[session_id] = answer.session_id
        self._store(session_id, answer.session_id)
        return answer.session_id

    async def _hand_over(self, conn: ClientSideConnection, known: str, servers: list[Any]) -> None:
        """A known session's new turn: its MCP servers (a new token) by ``session/resume``,
        else ``session/load`` (the history it replays goes to no run), when the agent offers
        one; otherwise its session keeps the first turn's endpoint, whose token is revoked."""
        from acp import RequestError

        cwd = str(self.host.root_dir)
        offered = self.capabilities.get("sessionCapabilities") or {}
        with contextlib.suppress(RequestError):  # refused: the turn goes without the endpoint
            if offered.get("resume") is not None:
                await conn.resume_session(cwd=cwd, session_id=known, mcp_servers=servers)
            elif self.capabilities.get("loadSession"):
                await conn.load_session(cwd=cwd, session_id=known, mcp_servers=servers)

    def _sessions_file(self, session_id: str) -> Path:
        return self.host.state_dir / SESSIONS / f"{session_id}.json"

    def _stored(self, session_id: str) -> str | None:
        try:
            stored = json.loads(self._sessions_file(session_id).read_text())
        except (OSError, ValueError):
            return None
        found = stored.get(self.name) if isinstance(stored, dict) else None
        return found if isinstance(found, str) else None

    def _store(self, session_id: str, agent_session: str) -> None:
        path = self._sessions_file(session_id)
        try:
            stored = json.loads(path.read_text())
        except (OSError, ValueError):
            stored = {}
        stored = {**(stored if isinstance(stored, dict) else {}), self.name: agent_session}
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".acp-")
        with os.fdopen(fd, "w") as handle:
            json.dump(stored, handle)
        os.replace(temp, path)


def initialize_params(config: Resolve) -> dict[str, Any]:
    """``initialize``'s parameters: the file methods offered, the terminal only when on."""
    from acp import PROTOCOL_VERSION
    from acp.schema import ClientCapabilities, FileSystemCapabilities, Implementation

    files = FileSystemCapabilities(read_text_file=True, write_text_file=True)
    return {
        "protocol_version": PROTOCOL_VERSION,
        "client_capabilities": ClientCapabilities(fs=files, terminal=config.acp_terminal),
        "client_info": Implementation(name="jupyter-resolve", version=__version__),
    }


class AcpAgents:
    """Every configured agent, by name."""

    def __init__(self, config: Resolve, host: AgentHost) -> None:
        self.host = host
        self.agents = {
            name: AgentProcess(name, spec, host)
            for name, spec in parse_agents(config.acp_agents).items()
        }

    @property
    def locked(self) -> bool:
        """Whether the administrator's policy switched external agents off."""
        return self.host.policy.feature_off(FEATURE)

    def get(self, name: str) -> AgentProcess:
        """The agent a chat names: 403 ``locked`` while the policy switched agents off,
        BadRequest for a name not configured."""
        if self.locked:
            raise Locked(self.host.policy.off_reason(FEATURE))
        agent = self.agents.get(name)
        if agent is None:
            known = ", ".join(sorted(self.agents)) or "none are configured (c.Resolve.acp_agents)"
            raise BadRequest(f"agent: no external agent named '{name}' (known: {known})")
        return agent

    def listing(self) -> list[dict[str, Any]]:
        return [self.agents[name].listing() for name in sorted(self.agents)]

    def describe(self) -> dict[str, Any]:
        return {name: self.agents[name].describe() for name in sorted(self.agents)}

    async def stop(self) -> None:
        for agent in self.agents.values():
            try:
                await agent.stop()
            except Exception:
                self.host.log.exception("stopping the external agent '%s' failed", agent.name)
