"""``GET /resolve/api/agents``: the external agents a chat may name (DESIGN 10.4)."""

from __future__ import annotations

from typing import Any

from tornado import web

from .base import ResolveHandler, authorized


class AgentsHandler(ResolveHandler):
    """``{"agents": [{name, description, state: idle|running|error, error}], "locked": bool}``,
    by name; ``locked`` (and no agents) when the administrator's policy switched them off."""

    @web.authenticated
    @authorized("read")
    def get(self) -> None:
        acp = self.gateway.acp
        self.answer({"agents": [] if acp.locked else acp.listing(), "locked": acp.locked})


routes: list[tuple[str, Any]] = [
    (r"/resolve/api/agents", AgentsHandler),
]
