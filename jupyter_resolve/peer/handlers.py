"""The peer endpoint (DESIGN 3.8): the Agent Card, the signed invoke endpoint and A2A JSON-RPC.

A peer proves itself by signing (``peer/signing.py``): no Jupyter login is needed, and what it
may do is the signature plus ``c.Resolve.peer_tools`` (its jobs run with only those tools). The
JSON-RPC endpoint also takes a Jupyter login; then the server's Authorizer decides (resource
``resolve``: read for ``GetTask``, execute to send or cancel). With no peer configured
(``c.Resolve.peer_secrets`` empty) the endpoints answer 404 to anyone without a Jupyter login.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

from jupyter_server.auth.decorator import allow_unauthenticated
from pydantic import BaseModel, ConfigDict, Field
from tornado import web
from tornado.iostream import StreamClosedError

from ..contracts.errors import RpcError, SignatureError
from ..handlers.base import ResolveHandler, authorized
from ..handlers.streaming import SSEWriter
from . import jsonrpc, streams
from .grants import JUPYTER_OWNER, TOKEN_OWNER
from .routes import JSONRPC_PATH
from .service import PeerService
from .signing import HEADER_PEER, Target, is_signed

MAX_BODY = 1024 * 1024
"""Largest peer request body. The handlers stream the body in (``@web.stream_request_body``)
and refuse a bigger one as it arrives, so an unsigned sender cannot make the server hold it."""
TOO_BIG = f"peer request bodies are limited to {MAX_BODY} bytes"
OFF = "the peer endpoint is off: no peers are configured (c.Resolve.peer_secrets)"


class InvokeBody(BaseModel):
    """``POST /resolve/peer/invoke``."""

    model_config = ConfigDict(extra="ignore")

    tool: str = Field(min_length=1, max_length=256)
    arguments: dict[str, Any] = Field(default_factory=dict)


class PeerHandler(ResolveHandler):
    """Base: the peer service, signature checks, XSRF waived for signed requests only, and for
    the POST handlers (``@web.stream_request_body``) the body read in pieces up to
    :data:`MAX_BODY` (a 413 at once beyond it, before reading it)."""

    auth_resource = "resolve"
    _received: bytearray

    async def prepare(self) -> None:  # type: ignore[override]
        self._received = bytearray()
        declared = self.request.headers.get("Content-Length", "")
        if declared.strip().isdigit() and int(declared) > MAX_BODY:
            # refused before a byte of it is read; tornado closes the connection after the
            # answer rather than reading the rest
            raise web.HTTPError(413, TOO_BIG, reason="Payload Too Large")
        await super().prepare()

    def data_received(self, chunk: bytes) -> None:
        if self._finished:
            return  # already refused: what still arrives is dropped
        if len(self._received) + len(chunk) > MAX_BODY:
            # a chunked body has no Content-Length: it is refused when it passes the limit
            self._received = bytearray()
            self.set_status(413)
            self.answer({"ok": False, "error": TOO_BIG})
            return
        self._received += chunk

    def received(self) -> bool:
        """Make the streamed body the request's body; False when it was already refused."""
        if self._finished:
            return False
        self.request.body = bytes(self._received)
        return True

    @property
    def peers(self) -> PeerService:
        service: PeerService | None = self.settings.get("resolve_peer")
        if service is None:
            service = self.settings["resolve_peer"] = PeerService(self.service("host"))
        return service

    def check_xsrf_cookie(self) -> None:
        # A signed request is judged by its signature, never by a cookie (a browser cannot add
        # these headers to a cross-site request); an anonymous one is refused by the method
        # itself. A request with a Jupyter login gets Jupyter's check.
        anonymous = getattr(self, "_jupyter_current_user", None) is None
        if is_signed(self.request.headers) or anonymous:
            return None
        super().check_xsrf_cookie()

    def check_size(self) -> None:
        if len(self.request.body) > MAX_BODY:
            raise web.HTTPError(413, TOO_BIG)

    def target(self) -> Target:
        """What a v2 signature must have been made for: this request's method, its path as
        sent (with the base URL, without the query) and its Host header as sent."""
        request = self.request
        return Target(
            method=request.method or "", path=request.path, host=request.headers.get("Host", "")
        )

    def signed_peer(self) -> str | None:
        """The verified peer of a signed request; on failure answers 404 (off) or 401."""
        if not self.peers.enabled:
            raise web.HTTPError(404, OFF)
        self.check_size()
        try:
            return self.peers.verify(self.request.headers, self.request.body, self.target()).peer
        except SignatureError as exc:
            self.log.warning(
                "jupyter-resolve: peer request refused (%s, peer %r)",
                exc.reason,
                self.request.headers.get(HEADER_PEER, "")[:64],
            )
            self.set_status(401)
            self.answer({"ok": False, "error": exc.message})
            return None


class AgentCardHandler(PeerHandler):
    """``GET <base_url>resolve/.well-known/agent-card.json``: public while a peer is configured
    (discovery), else only for a Jupyter user the Authorizer lets read ``resolve``."""

    @allow_unauthenticated
    async def get(self) -> None:
        if self.peers.enabled:
            return self.send_card()
        if self.current_user is None:
            raise web.HTTPError(404, OFF)
        await self.card_for_user()

    @authorized("read")
    async def card_for_user(self) -> None:
        self.send_card()

    def send_card(self) -> None:
        url = f"{self.request.protocol}://{self.request.host}{self.base_url}{JSONRPC_PATH}"
        self.answer(self.peers.card(url))


@web.stream_request_body
class InvokeHandler(PeerHandler):
    """``POST <base_url>resolve/peer/invoke`` ``{tool, arguments}``, signed by a peer (the only
    authorization: the signature, and the peer's granted tools for its jobs)."""

    @allow_unauthenticated
    async def post(self) -> None:
        if not self.received():
            return
        peer = self.signed_peer()
        if peer is None:
            return
        body = self.parse(InvokeBody)
        reply = await self.peers.invoke(peer, body.tool, body.arguments)
        self.set_status(int(reply.pop("status", 200)))
        if "retry_after" in reply:
            self.set_header("Retry-After", str(reply["retry_after"]))
        self.answer(reply)


@web.stream_request_body
class JsonRpcHandler(PeerHandler):
    """``POST <base_url>resolve/peer/a2a``: A2A JSON-RPC, signed by a peer (its jobs run with
    its granted tools) or with a Jupyter login (then the jobs belong to ``jupyter:<user>`` and
    the Authorizer decides). The streaming methods answer as SSE."""

    @allow_unauthenticated
    async def post(self) -> None:
        if not self.received():
            return
        if is_signed(self.request.headers):
            owner = self.signed_peer()
            if owner is None:
                return
            return await self.serve(owner)
        if self.current_user is not None:
            return await self.serve_user()
        if not self.peers.enabled:
            raise web.HTTPError(404, OFF)
        self.set_status(401)
        self.answer({"ok": False, "error": "sign the request or send a Jupyter token"})

    def owner(self) -> str:
        """Who the jobs of this Jupyter login belong to: the user's name, or, when the request
        came in with the server's own token (a shared secret, not a person: jupyter_server
        makes up a new anonymous user for each such request), that token's digest."""
        presented = self.identity_provider.get_token(self) or ""
        expected = str(self.token or "")
        if presented and expected and hmac.compare_digest(presented.encode(), expected.encode()):
            return TOKEN_OWNER + hashlib.sha256(presented.encode()).hexdigest()[:32]
        return f"{JUPYTER_OWNER}{self.current_user.username}"

    def send(self, response: dict[str, Any]) -> None:
        self.set_status(jsonrpc.http_status(response))
        wait = jsonrpc.retry_after(response)
        if wait is not None:
            self.set_header("Retry-After", str(wait))
        self.answer(response)

    def parsed(self) -> jsonrpc.Call | None:
        """The request's call; None when it did not parse (the error is answered)."""
        self.check_size()
        raw = self.request.body
        try:
            return jsonrpc.parse_call(raw)
        except RpcError as exc:
            self.send(jsonrpc.refuse(raw, exc))
            return None

    async def serve(self, owner: str) -> None:
        call = self.parsed()
        if call is not None:
            await self.respond(owner, call)

    async def respond(self, owner: str, call: jsonrpc.Call) -> None:
        if call.op in jsonrpc.STREAMING:
            return await self.stream(owner, call)
        self.send(await jsonrpc.respond(self.peers.jobs, owner, call))

    async def stream(self, owner: str, call: jsonrpc.Call) -> None:
        """Each response a ``data:`` frame; keep-alive comments while the run is quiet."""
        sse = SSEWriter(self)
        sse.start()
        idle = self.keepalive
        try:
            await self.flush()
            async for frame in streams.frames(self.peers.jobs, owner, call, idle=idle):
                if frame is None:
                    sse.keepalive()
                else:
                    sse.data(frame)
                await self.flush()
        except StreamClosedError:
            return  # the client went away; the job goes on
        sse.finish()

    @authorized("read")
    async def serve_user(self) -> None:
        call = self.parsed()
        if call is None:
            return
        if call.op not in jsonrpc.READING:
            return await self.serve_user_execute(call)
        await self.respond(self.owner(), call)

    @authorized("execute")
    async def serve_user_execute(self, call: jsonrpc.Call) -> None:
        # sending a message starts a job, cancelling stops one: both are execute on resolve
        owner = self.owner()
        self.peers.jobs.user_permissions[owner] = await self.run_permissions()  # DESIGN 10.1
        await self.respond(owner, call)
