"""``GET /resolve/api/agents``: the external agents a chat may name (DESIGN 10.4)."""

from __future__ import annotations

from tornado import web

from ..handlers.base import ResolveHandler, authorized
from .access import agent_refusal
from .agents import AcpAgents


class AgentsHandler(ResolveHandler):
    """``{"agents": [{name, description, state: idle|running|error, error}], "locked": bool,
    "refused": str | null}``, by name; no agents when the administrator's policy switched them
    off (``locked``) or the caller may not have one (``refused`` says why: acp/access.py)."""

    @web.authenticated
    @authorized("read")
    async def get(self) -> None:
        acp: AcpAgents = self.service("agents")
        refused = agent_refusal(await self.run_permissions())
        shown = [] if acp.locked or refused else acp.listing()
        self.answer({"agents": shown, "locked": acp.locked, "refused": refused})
