"""The gateway: one server's services (built by ``wiring.py``, each with its collaborators),
held for their life: started lazily, so that a request as well as the server's start hook
brings the runtime up, reported on by :meth:`Gateway.health`, stopped with the server.

Handlers reach the services through the server's settings (:meth:`Gateway.web_settings`). It
imports no handler: the extension hands it the routes of its internal listener
(:meth:`Gateway.route_internal`).
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tornado import web
from tornado.httpserver import HTTPServer
from tornado.netutil import bind_sockets

from ._version import __version__
from .admin_policy import AppliedPolicy
from .config import Resolve
from .contracts.bodies import ChatRequest
from .contracts.errors import ProviderError, RuntimeStartError
from .contracts.models import default_model, listed_models
from .contracts.policy import invalid_entries
from .notebook.kernels import UserKernels
from .providers.base import Provider
from .providers.reachability import ProviderHealth, one_line
from .runs.run import Run
from .scratch import sandbox as scratch_sandbox
from .souls import Soul
from .wiring import EdgeServices, wire

if TYPE_CHECKING:
    from .artifacts import Artifacts


class Gateway:
    """One server's services, from start to stop.

    ``user_kernels`` (the server's sessions and kernels), ``server_kernels`` (its kernel
    manager, for scratch kernels on a Jupyter gateway) and ``policy`` (the administrator's
    locks) come from the extension; a gateway made without them (in a test) has none."""

    def __init__(
        self,
        config: Resolve,
        *,
        root_dir: Path,
        log: logging.Logger,
        user_kernels: UserKernels | None = None,
        server_kernels: Any = None,
        policy: AppliedPolicy | None = None,
    ) -> None:
        self.config = config
        self.log = log
        self.root_dir = root_dir
        self.user_kernels = user_kernels
        self.policy = policy or AppliedPolicy()
        # called with each promotion (the audit's, added by the extension): artifacts/service.py
        self.on_promoted: list[Callable[[Any, bool], None]] = []
        services = wire(
            config,
            root_dir=root_dir,
            log=log,
            user_kernels=user_kernels,
            server_kernels=server_kernels,
            policy=self.policy,
            on_promoted=self.on_promoted,
        )
        self.state_dir = services.state_dir
        self.runtime_token = services.runtime_token
        self.provider_health = ProviderHealth(log)
        self.notes = services.notes
        self.model_list = services.model_list
        self.schemas = services.schemas
        self.kernels = services.kernels
        self.proposals = services.proposals
        self.tools = services.tools
        self.mcp = services.mcp
        self.supervisor = services.supervisor
        self.runs = services.runs
        self.transcripts = services.transcripts
        self.tasks = services.tasks
        self.souls: dict[str, Soul] = services.souls
        self.catalogue = services.catalogue
        self.notebook = services.notebook
        self.launcher = services.launcher
        self.acp = services.launcher.agents  # external agents (c.Resolve.acp_agents)
        self.internal_port: int | None = None
        self._internal_routes: list[Any] = []
        self._internal_log: Callable[[web.RequestHandler], None] | None = None
        self._internal_server: HTTPServer | None = None
        self._sockets: list[socket.socket] = []
        self._start_lock = asyncio.Lock()
        self._cull_task: asyncio.Task[None] | None = None

    @property
    def provider(self) -> Provider:
        """The provider every run start and round reads (the launcher's: a test may swap it)."""
        return self.launcher.provider

    @provider.setter
    def provider(self, provider: Provider) -> None:
        self.launcher.provider = provider

    @property
    def artifacts(self) -> Artifacts:
        """The artifact store and promotion, built on first use."""
        return self.launcher.artifacts

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
            "resolve_catalogue": self.catalogue,
            "resolve_launcher": self.launcher,
            "resolve_notebook": self.notebook,
            # what the peer endpoint and the MCP server's tools use (both built on first use)
            "resolve_host": EdgeServices(self.notebook, self.launcher, self.start),
            "resolve_provider": lambda: self.provider,
            "resolve_artifacts": lambda: self.artifacts,
        }

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
        self.catalogue.register_mcp_tools()

    def start_chat(self, request: ChatRequest) -> Run:
        """A run for a chat alone, started in process by the server's own code (tests, demos):
        the launcher's (every permission, no owner)."""
        return self.launcher.start_chat(request)

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

    def health(self) -> dict[str, Any]:
        runtime = self.supervisor.describe()
        drift = self.catalogue.drift()
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
