"""The gateway: one object holding the services of a server (provider, runtime, runs, tools).

Handlers reach it through ``settings["resolve"]``; it starts lazily so that a request, as well as
the server's start hook, brings the runtime up.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from pathlib import Path
from typing import Any

from tornado import web
from tornado.httpserver import HTTPServer
from tornado.netutil import bind_sockets

from ._version import __version__
from .config import Resolve
from .discipline import tool_discipline
from .errors import NotFound
from .handlers.internal import internal_routes
from .models import ChatRequest, ToolCallRequest, ToolResult
from .providers import make_provider
from .providers.base import Provider
from .runs.manager import RunManager
from .runs.run import Run
from .runtime.supervisor import RuntimeStartError, RuntimeSupervisor
from .tools.dispatch import ToolDispatcher


class Gateway:
    """Everything the extension serves, behind one object."""

    def __init__(self, config: Resolve, *, root_dir: Path, log: logging.Logger) -> None:
        self.config = config
        self.log = log
        self.root_dir = root_dir
        self.state_dir = Path(config.state_dir) if config.state_dir else root_dir / ".resolve"
        self.runtime_token = RuntimeSupervisor.new_token()
        self.provider: Provider = make_provider(
            config.provider,
            model=config.model,
            base_url=config.resolved_base_url(),
            api_key=config.provider_key(),
            api_key_env=config.resolved_key_env(),
            script=config.script or None,
            stream_usage=config.stream_usage,
            timeout=config.provider_timeout,
            max_retries=config.provider_max_retries,
        )
        self.tools = ToolDispatcher()
        self.supervisor = RuntimeSupervisor(
            binary=config.runtime_path,
            inference_url="",
            tools_url="",
            token=self.runtime_token,
            log=log,
            start_timeout=config.runtime_start_timeout,
            health_interval=config.runtime_health_interval,
        )
        self.runs = RunManager(state_dir=self.state_dir, supervisor=self.supervisor, log=log)
        self.internal_port: int | None = None
        self._internal_server: HTTPServer | None = None
        self._sockets: list[socket.socket] = []
        self._start_lock = asyncio.Lock()

    async def start(self) -> None:
        """Bind the internal listener and start the runtime (idempotent)."""
        async with self._start_lock:
            if self._internal_server is None:
                self._sockets = bind_sockets(0, "127.0.0.1")
                self.internal_port = self._sockets[0].getsockname()[1]
                app = web.Application(internal_routes(self))
                self._internal_server = HTTPServer(app, idle_connection_timeout=3600)
                self._internal_server.add_sockets(self._sockets)
                base = f"http://127.0.0.1:{self.internal_port}/resolve/internal"
                self.supervisor.inference_url = f"{base}/v1/chat/completions"
                self.supervisor.tools_url = f"{base}/tools"
        try:
            await self.supervisor.ensure_running()
        except RuntimeStartError as exc:
            self.log.error("jupyter-resolve: %s", exc)

    def allowed_tools(self) -> list[str]:
        configured = self.config.allowed_tools
        names = self.tools.names if configured is None else list(configured)
        return [n for n in names if n in self.tools.names]

    def tool_specs(self) -> list[dict[str, Any]]:
        """The bridge manifest given to the runtime: what the agent can see."""
        return []

    def start_chat(self, request: ChatRequest) -> Run:
        tools = self.tool_specs()
        return self.runs.start(
            request,
            model=request.model or self.config.resolved_model(),
            tools=tools,
            discipline=tool_discipline([t["function"]["name"] for t in tools]),
            rounds=self.config.max_rounds,
        )

    async def call_tool(self, request: ToolCallRequest) -> ToolResult:
        try:
            self.runs.get(request.run_id)
        except NotFound as exc:
            return ToolResult(ok=False, output=exc.message)
        return await self.tools.call(request, self.allowed_tools())

    def health(self) -> dict[str, Any]:
        runtime = self.supervisor.describe()
        drift: list[str] = []
        return {
            "ok": runtime["state"] == "running" and not drift,
            "version": __version__,
            "runtime": runtime,
            "provider": {"name": self.config.provider, **self.provider.describe()},
            "drift": drift,
            "runs": {"live": sum(1 for r in self.runs.runs.values() if not r.completed)},
        }

    async def stop(self) -> None:
        await self.runs.stop()
        await self.supervisor.stop()
        if self._internal_server is not None:
            self._internal_server.stop()
            await self._internal_server.close_all_connections()
            self._internal_server = None
        await self.provider.aclose()
