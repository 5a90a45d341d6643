"""The gateway: one object holding the services of a server (provider, runtime, runs, tools).

Handlers reach its services through the server's settings (:meth:`Gateway.web_settings`); it
starts lazily so that a request, as well as the server's start hook, brings the runtime up. It imports no handler: the extension hands it
the routes of its internal listener (:meth:`Gateway.route_internal`).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import socket
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tornado import web
from tornado.httpserver import HTTPServer
from tornado.netutil import bind_sockets

from ._version import __version__
from .acp.agents import AcpAgents
from .acp.runs import start_agent_run
from .admin_policy import AppliedPolicy
from .config import Resolve
from .contracts.bodies import ChatRequest, ToolCallRequest, ToolResult
from .contracts.drift import compute_drift, mcp_drift, soul_drift, without_mcp
from .contracts.errors import ProviderError, RuntimeStartError
from .contracts.models import choose_model, default_model, listed_models
from .contracts.permissions import RunPermissions
from .contracts.policy import invalid_entries
from .notebook.kernels import UserKernels
from .providers.base import Provider
from .providers.reachability import ProviderHealth, one_line
from .runs.request import RunRequest
from .runs.run import Run
from .runs.start import start_run
from .scratch import sandbox as scratch_sandbox
from .souls import Soul
from .tools.catalog import ToolSchema, default_allow
from .tools.toolset import ToolSet
from .wiring import wire

if TYPE_CHECKING:
    from .artifacts import Artifacts


class Gateway:
    """Everything the extension serves, behind one object."""

    def __init__(self, config: Resolve, *, root_dir: Path, log: logging.Logger) -> None:
        self.config = config
        self.log = log
        self.root_dir = root_dir
        # the server's sessions and kernels (set by the extension)
        self.user_kernels: UserKernels | None = None
        self.policy = AppliedPolicy()  # the administrator's locks (set by the extension)
        # called with each promotion (the audit's, set by the extension): artifacts/service.py
        self.on_promoted: list[Callable[[Any, bool], None]] = []
        services = wire(self, config, root_dir=root_dir, log=log)
        self.state_dir = services.state_dir
        self.runtime_token = services.runtime_token
        self.provider: Provider = services.provider
        self.provider_health = ProviderHealth(log)
        self.notes = services.notes
        self.model_list = services.model_list
        self.schemas: list[ToolSchema] = services.schemas
        self.kernels = services.kernels
        self.proposals = services.proposals
        self.tools = services.tools
        self.mcp = services.mcp
        self.supervisor = services.supervisor
        self.runs = services.runs
        self.transcripts = services.transcripts
        self.tasks = services.tasks
        self.souls: dict[str, Soul] = services.souls
        self.acp = AcpAgents(config, self)  # external agents (c.Resolve.acp_agents)
        self.internal_port: int | None = None
        self._internal_routes: list[Any] = []
        self._internal_log: Callable[[web.RequestHandler], None] | None = None
        self._internal_server: HTTPServer | None = None
        self._sockets: list[socket.socket] = []
        self._start_lock = asyncio.Lock()
        self._cull_task: asyncio.Task[None] | None = None
        self._toolset: ToolSet | None = None
        self._toolset_key: tuple[Any, ...] = ()

    def web_settings(self) -> dict[str, Any]:
        """The services the handlers use, by name in the server's settings (as jupyter_server
        keeps ``kernel_manager``): each service's handlers read what they need
        (``handlers/base.py``'s :meth:`~ResolveHandler.service`). The provider and the artifact
        store are read when asked: a test may swap the one, the other is built on first use."""
        return {
            "resolve": self,
            "resolve_gateway": self,
            "resolve_config": self.config,
            "resolve_start": self.start,
            "resolve_state_dir": self.state_dir,
            "resolve_runs": self.runs,
            "resolve_tasks": self.tasks,
            "resolve_transcripts": self.transcripts,
            "resolve_souls": self.souls,
            "resolve_agents": self.acp,
            "resolve_user_kernels": self.user_kernels,
            "resolve_launcher": self,  # runs/handlers.py's Launcher
            "resolve_notebook": self,  # notebook/tools.py's NotebookHost
            "resolve_host": self,  # what the peer and the MCP server's tools need
            "resolve_provider": lambda: self.provider,
            "resolve_artifacts": lambda: self.artifacts,
        }

    @functools.cached_property
    def artifacts(self) -> Artifacts:
        """The artifact store, built on first use: most servers never promote (and its
        models cost a noticeable part of the extension's load)."""
        from .artifacts import Artifacts, ArtifactStore
        from .tools.replay import Replayer  # reproductions replay calls as runs do

        configured = self.config.artifacts_dir
        artifacts_dir = self.root_dir / configured if configured else None
        return Artifacts(
            ArtifactStore(artifacts_dir or self.state_dir / "artifacts"),
            root_dir=self.root_dir,
            sessions_dir=self.state_dir / "sessions",
            config=self.config,
            runs_dir=self.state_dir / "runs",
            on_promoted=self.on_promoted,
            replay=Replayer(
                self.kernels, self.config.tool_timeout, self.config.max_artifact_bytes
            ),
            session_runs=lambda s: [row.run_id for row in self.runs.session_rows(s)],
        )

    async def _cull_idle_kernels(self) -> None:
        idle = self.config.scratch_idle_timeout
        while True:
            await asyncio.sleep(min(60.0, max(idle / 4, 0.5)))
            await self.kernels.cull(idle)

    def route_internal(
        self, routes: list[Any], log_function: Callable[[web.RequestHandler], None] | None = None
    ) -> None:
        """The routes of the internal listener (inference, tools), served from :meth:`start`,
        and the function that logs its requests."""
        self._internal_routes = list(routes)
        self._internal_log = log_function

    _stopping = False  # set by stop(): nothing starts after it

    async def start(self) -> None:
        """Bind the internal listener and start the runtime (idempotent). Nothing once
        :meth:`stop` began: a request during the server's stop does not start it again."""
        if self._stopping:
            return
        async with self._start_lock:
            if self._stopping:
                return
            if self._internal_server is None:
                # hundreds of runs can call back at once (the kernel caps it at somaxconn)
                self._sockets = bind_sockets(0, "127.0.0.1", backlog=1024)
                self.internal_port = self._sockets[0].getsockname()[1]
                app = web.Application(self._internal_routes, log_function=self._internal_log)
                self._internal_server = HTTPServer(app, idle_connection_timeout=3600)
                self._internal_server.add_sockets(self._sockets)
                base = f"http://127.0.0.1:{self.internal_port}/resolve/internal"
                self.supervisor.inference_url = f"{base}/v1/chat/completions"
                self.supervisor.tools_url = f"{base}/tools"
            if self._cull_task is None:
                self._cull_task = asyncio.create_task(self._cull_idle_kernels())
        try:
            await self.supervisor.ensure_running()
        except RuntimeStartError as exc:
            (self.log.info if self._stopping else self.log.error)("jupyter-resolve: %s", exc)
        if self._stopping:
            return  # stop() came during the runtime's start, and ended it
        self.provider_health.check_when_due(self.provider)  # in the background: health shows it
        await self.mcp.discover()
        if self._stopping:
            await self.mcp.stop()  # what the discovery started after stop() stopped the rest
            return
        self._register_mcp_tools()

    def _register_mcp_tools(self) -> None:
        """The dispatcher runs exactly the MCP tools the servers list."""
        listed = set(self.mcp.names())
        for name in set(self.tools.names) - set(without_mcp(self.tools.names)) - listed:
            self.tools.unregister(name)
        for name in listed:
            self.tools.register(name, self._call_mcp)

    async def _call_mcp(self, request: ToolCallRequest) -> ToolResult:
        return await self.mcp.call(request, self.config.tool_timeout)

    def allowed_tools(self) -> list[str]:
        configured = self.config.allowed_tools
        # by default every tool of every configured MCP server too (their approval is ask)
        if configured is not None:
            return list(configured)
        return [*default_allow(self.schemas), *self.mcp.names()]

    def toolset(self) -> ToolSet:
        """The catalogue as of now, made again only when what it is made of changed: every
        run start and tool call reads it (tools/toolset.py)."""
        configured = self.config.allowed_tools
        key = (
            None if configured is None else tuple(configured),
            self.mcp.generation(),
            tuple(self.tools.names),
            tuple(self.souls),
        )
        if self._toolset is None or key != self._toolset_key:
            self._toolset = ToolSet(
                [*self.schemas, *self.mcp.schemas()], self.allowed_tools(), self._drift
            )
            self._toolset_key = key
        return self._toolset

    def tool_specs(self) -> list[dict[str, Any]]:
        """The bridge tools given to the runtime: what the agent can see."""
        return list(self.toolset().specs)

    def tool_lists(self) -> dict[str, list[str]]:
        """The four lists of DESIGN 3.4, as this gateway has them, and the fifth: the tools
        the MCP servers offer (DESIGN 9.3)."""
        return self._tool_lists(self.tool_specs())

    def _tool_lists(self, specs: list[dict[str, Any]]) -> dict[str, list[str]]:
        return {
            "schemas": [s.name for s in self.schemas],
            "allow": without_mcp(self.allowed_tools()),
            "bridge": without_mcp(t["function"]["name"] for t in specs),
            "implementations": without_mcp(self.tools.names),
            "mcp": self.mcp.names(),
        }

    def drift(self) -> list[str]:
        return list(self.toolset().drift)

    def _drift(self, specs: list[dict[str, Any]]) -> list[str]:
        souls = {name: soul.declared_tools() for name, soul in self.souls.items()}
        allowed = self.allowed_tools()
        builtin_souls = {name: without_mcp(tools) for name, tools in souls.items()}
        return (
            compute_drift(self._tool_lists(specs))
            + soul_drift(builtin_souls, without_mcp(allowed))
            + mcp_drift(allowed, souls, self.mcp.names(), self.mcp.unlisted())
        )

    def start_run(self, request: RunRequest) -> Run:
        """Start a run (runs/start.py): every edge (API, facade, A2A, MCP, tasks,
        delegation) builds its :class:`RunRequest`; a chat naming an external agent is that
        agent's run (acp/runs.py)."""
        if request.chat.agent is not None:
            return start_agent_run(self, self.acp.get(request.chat.agent), request)
        return start_run(self, request)

    def start_chat(self, request: ChatRequest) -> Run:
        """A run for a chat alone, started in process by the server's own code (no person to
        ask the Authorizer about: every permission; no owner either: the server's own run,
        which the audit names as the server's user)."""
        return self.start_run(
            RunRequest(request, permissions=RunPermissions.full(), others=True)
        )

    async def cancel_run(self, run_id: str) -> Run:
        """Cancel a run and stop its tools (see :meth:`RunManager.cancel`): a call running in
        the scratch kernel is interrupted (the shell tool then kills its process group)."""
        return await self.runs.cancel(run_id)

    def check_model(self, model: str | None) -> str:
        """The model a run would use for ``model``; BadRequest when not allowed."""
        return choose_model(model, self.config.allowed_models, self.config.resolved_model())

    async def models(self) -> dict[str, Any]:
        """``GET /resolve/api/models``: what a client may pick, from the provider's list
        (cached), only the allowed ones when ``c.Resolve.allowed_models`` is set. When the
        provider cannot say, the configured and allowed names, and why."""
        allowed = list(self.config.allowed_models)
        answer: dict[str, Any] = {
            "provider": self.config.provider,
            "default": default_model(allowed, self.config.resolved_model()),
            "allowed": allowed or None,
        }
        try:
            offered, cached = await self.model_list.models(self.provider)
        except ProviderError as exc:
            names = allowed or [answer["default"]]
            answer.update(
                models=[{"id": n, "listed": False} for n in names],
                source="config",
                error={"code": exc.code, "message": one_line(exc.message, 1000)},
            )
            return answer
        answer.update(models=listed_models(offered, allowed), source="provider", cached=cached)
        return answer

    def schema(self, name: str) -> ToolSchema | None:
        return self.toolset().schema(name)

    def health(self) -> dict[str, Any]:
        runtime = self.supervisor.describe()
        drift = self.drift()
        scratch_kernel = self.kernels.describe()
        problems = invalid_entries(self.config.approval_policy, self.tools.names)
        problems += self.policy.problems
        if scratch_kernel["problem"]:
            problems.append(scratch_kernel["problem"])
        return {
            "ok": runtime["state"] == "running" and not drift,
            "version": __version__,
            "runtime": runtime,
            "provider": {
                "name": self.config.provider,
                **self.provider.describe(),
                **self.provider_health.describe(self.provider),
            },
            "drift": drift,
            "config_problems": problems,
            "runs": {"live": sum(1 for r in self.runs.runs.values() if not r.completed)},
            "sandbox": scratch_sandbox.describe(self.kernels.sandbox),
            "scratch_kernel": scratch_kernel,
            "allow_remote_images": self.config.allow_remote_images,
            "mcp": self.mcp.describe(),
            "agents": self.acp.describe(),
            "locked": self.policy.shown(),
        }

    async def stop(self) -> None:
        """Stop what :meth:`start` made, whatever state it reached, a start under way included
        (the runtime's spawn is cancelled). Never raises: a part that fails to stop is logged
        and the next one still stops (the server's own cleanup comes after)."""
        self._stopping = True
        if self._cull_task is not None:
            self._cull_task.cancel()
        self.provider_health.stop()

        async def close_internal_listener() -> None:
            server, self._internal_server = self._internal_server, None
            if server is not None:
                server.stop()
                await server.close_all_connections()

        for part, step in (
            ("runs", self.runs.stop),
            ("scratch kernels", self.kernels.stop),
            ("MCP servers", self.mcp.stop),
            ("external agents", self.acp.stop),
            ("runtime", self.supervisor.stop),
            ("internal listener", close_internal_listener),
            ("provider's client", self.provider.aclose),
        ):
            try:
                await step()
            except Exception:
                self.log.exception("jupyter-resolve: stopping the %s failed", part)
