"""The peer endpoint (DESIGN 3.8): the Agent Card, the signed invoke endpoint and A2A JSON-RPC.

None of these needs a Jupyter login: a peer proves itself by signing (``peer/signing.py``); the
JSON-RPC endpoint also takes a Jupyter token. With no peer configured (``c.Resolve.peer_secrets``
empty) the endpoints answer 404 to anyone without a Jupyter login.
"""

from __future__ import annotations

from typing import Any

from jupyter_server.auth.decorator import allow_unauthenticated
from pydantic import BaseModel, ConfigDict, Field
from tornado import web

from ..errors import ResolveError
from ..peer import jsonrpc
from ..peer.card import CARD_PATH, INVOKE_PATH, JSONRPC_PATH
from ..peer.service import PeerService
from ..peer.signing import SignatureError, is_signed
from .base import ResolveHandler

MAX_BODY = 1024 * 1024
OFF = "the peer endpoint is off: no peers are configured (c.Resolve.peer_secrets)"


class InvokeBody(BaseModel):
    """``POST /resolve/peer/invoke``."""

    model_config = ConfigDict(extra="ignore")

    tool: str = Field(min_length=1, max_length=256)
    arguments: dict[str, Any] = Field(default_factory=dict)


class PeerHandler(ResolveHandler):
    """Base: the peer service, signature checks, and XSRF waived for signed requests only."""

    @property
    def peers(self) -> PeerService:
        service: PeerService | None = self.settings.get("resolve_peer")
        if service is None:
            service = self.settings["resolve_peer"] = PeerService(self.gateway)
        return service

    def check_xsrf_cookie(self) -> None:
        # A signed request is judged by its signature, never by a cookie (a browser cannot add
        # these headers to a cross-site request); an anonymous one is refused by the method
        # itself. A request with a Jupyter login gets Jupyter's check.
        anonymous = getattr(self, "_jupyter_current_user", None) is None
        if is_signed(self.request.headers) or anonymous:
            return None
        super().check_xsrf_cookie()

    def signed_peer(self) -> str | None:
        """The verified peer of a signed request; on failure answers 404 (off) or 401."""
        if not self.peers.enabled:
            raise web.HTTPError(404, OFF)
        if len(self.request.body) > MAX_BODY:
            raise web.HTTPError(413, f"bodies are limited to {MAX_BODY} bytes")
        try:
            return self.peers.verify(self.request.headers, self.request.body).peer
        except SignatureError as exc:
            self.log.warning(
                "jupyter-resolve: peer request refused (%s, peer %r)",
                exc.reason,
                self.request.headers.get("X-Resolve-Peer", "")[:64],
            )
            self.set_status(401)
            self.answer({"ok": False, "error": exc.message})
            return None


class AgentCardHandler(PeerHandler):
    """``GET <base_url>resolve/.well-known/agent-card.json``."""

    @allow_unauthenticated
    def get(self) -> None:
        if not self.peers.enabled and self.current_user is None:
            raise web.HTTPError(404, OFF)
        url = f"{self.request.protocol}://{self.request.host}{self.base_url}{JSONRPC_PATH}"
        self.answer(self.peers.card(url))


class InvokeHandler(PeerHandler):
    """``POST <base_url>resolve/peer/invoke`` ``{tool, arguments}``, signed by a peer."""

    @allow_unauthenticated
    async def post(self) -> None:
        peer = self.signed_peer()
        if peer is None:
            return
        try:
            body = self.parse(InvokeBody)
        except ResolveError as exc:
            return self.fail(exc)
        self.answer(await self.peers.invoke(peer, body.tool, body.arguments))


class JsonRpcHandler(PeerHandler):
    """``POST <base_url>resolve/peer/a2a``: A2A JSON-RPC, signed by a peer or with a Jupyter
    login (then the jobs belong to ``jupyter:<user>``)."""

    @allow_unauthenticated
    async def post(self) -> None:
        if is_signed(self.request.headers):
            owner = self.signed_peer()
            if owner is None:
                return
        elif self.current_user is not None:
            owner = f"jupyter:{self.current_user.username}"
        elif not self.peers.enabled:
            raise web.HTTPError(404, OFF)
        else:
            self.set_status(401)
            return self.answer({"ok": False, "error": "sign the request or send a Jupyter token"})
        self.answer(await jsonrpc.handle(self.peers.jobs, owner, self.request.body))


routes: list[tuple[str, Any]] = [
    ("/" + CARD_PATH.replace(".", r"\."), AgentCardHandler),
    ("/" + INVOKE_PATH, InvokeHandler),
    ("/" + JSONRPC_PATH, JsonRpcHandler),
]
