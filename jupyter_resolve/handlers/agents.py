"""``GET /resolve/api/agents``: the external agents a chat may name (DESIGN 10.4)."""

from __future__ import annotations

from typing import Any

from tornado import web

from .base import ResolveHandler, authorized


class AgentsHandler(ResolveHandler):
    """``{"agents": [{name, description, state: idle|running|error, error}]}``, by name."""

    @web.authenticated
    @authorized("read")
    def get(self) -> None:
        self.answer({"agents": self.gateway.acp.listing()})


routes: list[tuple[str, Any]] = [
    (r"/resolve/api/agents", AgentsHandler),
]
