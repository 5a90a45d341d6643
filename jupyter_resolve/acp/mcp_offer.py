"""This server's MCP endpoint, offered to an external agent for one prompt turn (DESIGN 9.3, 10.4).

The agent gets ``<base_url>resolve/mcp`` with an MCP-scoped token (mcp/tokens.py: read runs,
artifacts and notebooks, ``ask``, propose cells a person decides; no file writes, no user
kernel) made for the turn and revoked when the turn ends: a token an agent kept cannot serve a
later turn of another session, or anything after. It reaches the agent in the session's
``session/new``, and in later turns by ``session/resume`` (else ``session/load``) with the new
token, when the agent offers one of them (agents.py). Offered only to agents that take MCP over
HTTP (``mcpCapabilities.http``). Tokens a previous server process left (it stopped in a turn)
are revoked when the agent starts.
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
MAX_NAME = 128  # a token's name (mcp/tokens.py)


class OfferHost(Protocol):
    config: Resolve
    state_dir: Path
    log: logging.Logger
    user_kernels: UserKernels | None


def token_name(agent: str, run_id: str) -> str:
    """What a turn's token is called in ``GET /resolve/api/mcp-tokens``: the agent and run."""
    return f"{TOKEN_NAME}{agent} for {run_id}"[:MAX_NAME]


def minted_for(name: str, agent: str) -> bool:
    """Whether the token ``name`` was made for a turn of ``agent`` (or, before, its process)."""
    return name == TOKEN_NAME + agent or name.startswith(f"{TOKEN_NAME}{agent} for ")


class TurnToken:
    """One turn's token; :meth:`revoke` when the turn ends."""

    def __init__(self, store: TokenStore, token_id: str, token: str, url: str) -> None:
        self.store = store
        self.token_id = token_id
        self.token = token
        self.url = url

    def servers(self) -> list[Any]:
        """``session/new``'s (``/resume``'s, ``/load``'s) ``mcpServers``: this endpoint."""
        from acp.schema import HttpHeader, HttpMcpServer

        header = HttpHeader(name="Authorization", value=f"Bearer {self.token}")
        return [HttpMcpServer(type="http", name="jupyter-resolve", url=self.url, headers=[header])]

    def revoke(self) -> None:
        with contextlib.suppress(ResolveError, OSError):
            self.store.revoke(self.token_id)


class McpEndpoint:
    """The endpoint one agent process may be offered; tokens are made per turn."""

    def __init__(self, host: OfferHost, agent: str, url: str) -> None:
        self.host = host
        self.agent = agent
        self.url = url
        self.store = TokenStore(host.state_dir)

    @classmethod
    def make(cls, host: OfferHost, agent: str, capabilities: dict[str, Any]) -> McpEndpoint | None:
        """The endpoint for a newly started agent, or None (no HTTP MCP, no server); tokens a
        previous process left for this agent are revoked."""
        if not (capabilities.get("mcpCapabilities") or {}).get("http"):
            return None
        user = host.user_kernels
        if user is None:
            return None
        url = kernel_url(user.serverapp, host.config.kernel_url) + "resolve/mcp"
        endpoint = cls(host, agent, url)
        try:
            for left in [t for t in endpoint.store.tokens() if minted_for(t.name, agent)]:
                endpoint.store.revoke(left.id)
        except (ResolveError, OSError) as exc:
            host.log.warning("external agent '%s': its old MCP tokens stay: %s", agent, exc)
        return endpoint

    def token_for(self, run_id: str) -> TurnToken | None:
        """A token for the turn of ``run_id``, or None (the store is full or cannot be
        written: the turn goes without the endpoint, and the log says why)."""
        try:
            info, token = self.store.create(token_name(self.agent, run_id))
        except (ResolveError, OSError) as exc:
            self.host.log.warning("external agent '%s': no MCP token for it: %s", self.agent, exc)
            return None
        return TurnToken(self.store, info.id, token, self.url)
