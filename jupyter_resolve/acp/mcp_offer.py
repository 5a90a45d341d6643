"""This server's MCP endpoint, offered to an external agent in ``session/new`` (DESIGN 9.3, 10.4).

The agent gets ``<base_url>resolve/mcp`` with an MCP-scoped token of its own (mcp/tokens.py:
read runs, artifacts and notebooks, ``ask``, propose cells a person decides; no file writes, no
user kernel), made when the agent starts and revoked when it stops. A token a previous server
process left (it stopped without revoking) is revoked first. Offered only to agents that take
MCP over HTTP (``mcpCapabilities.http``), and only in sessions whose caller may read the
server's files (the token reads notebooks).
"""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path
from typing import Any, Protocol

from ..config import Resolve
from ..contracts.errors import ResolveError
from ..kernel_env import kernel_url
from ..mcp.tokens import TokenStore
from ..notebook.kernels import UserKernels

TOKEN_NAME = "acp agent "  # the tokens minted for agents are named so, and the agent's name


class OfferHost(Protocol):
    config: Resolve
    state_dir: Path
    log: logging.Logger
    user_kernels: UserKernels | None


class McpOffer:
    """The endpoint and the token one agent process was given."""

    def __init__(self, store: TokenStore, token_id: str, token: str, url: str) -> None:
        self.store = store
        self.token_id = token_id
        self.token = token
        self.url = url

    @classmethod
    def make(cls, host: OfferHost, agent: str, capabilities: dict[str, Any]) -> McpOffer | None:
        """The offer for a newly started agent, or None (no HTTP MCP, no server, no token)."""
        if not (capabilities.get("mcpCapabilities") or {}).get("http"):
            return None
        user = host.user_kernels
        if user is None:
            return None
        url = kernel_url(user.serverapp, host.config.kernel_url) + "resolve/mcp"
        store = TokenStore(host.state_dir)
        name = TOKEN_NAME + agent
        try:
            for left in [t for t in store.tokens() if t.name == name]:
                store.revoke(left.id)
            info, token = store.create(name)
        except (ResolveError, OSError) as exc:
            host.log.warning("external agent '%s': no MCP token for it: %s", agent, exc)
            return None
        return cls(store, info.id, token, url)

    def servers(self) -> list[Any]:
        from acp.schema import HttpHeader, HttpMcpServer

        header = HttpHeader(name="Authorization", value=f"Bearer {self.token}")
        return [HttpMcpServer(type="http", name="jupyter-resolve", url=self.url, headers=[header])]

    def revoke(self) -> None:
        with contextlib.suppress(ResolveError, OSError):
            self.store.revoke(self.token_id)
