"""What the gateway itself answers (DESIGN 3.5): its health, the models, tools and souls it
offers, and the person's usage. Everything else is a service's, beside it (``runs/handlers.py``,
``artifacts/handlers.py``...)."""

from __future__ import annotations

from typing import Any, cast

from tornado import web

from .gateway import Gateway
from .handlers.base import ResolveHandler, authorized


class GatewayHandler(ResolveHandler):
    """Base: the gateway, whose health names every part."""

    @property
    def gateway(self) -> Gateway:
        return cast("Gateway", self.service("gateway"))


class HealthHandler(GatewayHandler):
    """``GET /resolve/api/health``."""

    @web.authenticated
    @authorized("read")
    async def get(self) -> None:
        await self.ensure_started()
        await self.gateway.provider_health.ready(self.gateway.provider)
        self.answer(self.gateway.health())


class ModelsHandler(GatewayHandler):
    """``GET /resolve/api/models``: the models a client may pick (see Gateway.models)."""

    @web.authenticated
    @authorized("read")
    async def get(self) -> None:
        self.answer(await self.gateway.models())


class UsageHandler(GatewayHandler):
    """``GET /resolve/api/usage``: the user's own usage and budgets, from the organization's
    hub service (``c.Resolve.provider = "hub"``); nulls with any other provider."""

    @web.authenticated
    @authorized("read")
    async def get(self) -> None:
        from .providers.hub import usage_of

        self.answer(await usage_of(self.gateway.provider))


class ToolsHandler(GatewayHandler):
    """``GET /resolve/api/tools`` — the tools the agent can see."""

    @web.authenticated
    @authorized("read")
    async def get(self) -> None:
        await self.ensure_started()  # MCP servers' tools are listed once they have started
        self.answer({"tools": self.gateway.catalogue.tool_specs()})


class SoulsHandler(GatewayHandler):
    """``GET /resolve/api/souls``."""

    @web.authenticated
    @authorized("read")
    def get(self) -> None:
        allowed = self.gateway.catalogue.allowed_tools()
        souls = [
            {
                "name": s.name,
                "role": s.role,
                "description": s.description,
                "tools": s.tool_names(allowed),
                "rounds": s.rounds,
            }
            for s in sorted(self.gateway.souls.values(), key=lambda s: s.name)
        ]
        self.answer({"souls": souls})


routes: list[tuple[str, Any]] = [
    (r"/resolve/api/health", HealthHandler),
    (r"/resolve/api/models", ModelsHandler),
    (r"/resolve/api/usage", UsageHandler),
    (r"/resolve/api/tools", ToolsHandler),
    (r"/resolve/api/souls", SoulsHandler),
]
