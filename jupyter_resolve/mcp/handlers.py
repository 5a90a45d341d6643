"""``<base_url>resolve/mcp``: the workbench as an MCP server over streamable HTTP (DESIGN 9.3).

Jupyter authenticates every request (the token header MCP clients send, or a hub's) and the
Authorizer decides (DESIGN 9.4): speaking MCP at all is ``resolve`` read; ``ask`` also needs
execute, ``notebook_read`` ``contents`` read. POST carries one JSON-RPC message: a notification
is accepted (202), a ``tools/call`` is answered as an event stream (progress notifications while
``ask`` runs, then the response), anything else as JSON. GET offers no server stream (405);
DELETE ends the session.

An MCP-scoped token (``mcp/tokens.py``; ``Authorization: Bearer resolve-mcp-...``) is accepted
here and nowhere else: under it only :data:`~..mcp.tokens.GRANTS` are allowed, so ``ask`` runs
reach neither the server's files for writing nor a user's kernel, and ``notebook_propose`` only
puts cells in front of a person. ``/resolve/api/mcp-tokens`` makes, lists and revokes them.
"""

from __future__ import annotations

import json
from typing import Any

from jupyter_server.auth.authorizer import Authorizer
from jupyter_server.auth.identity import User
from tornado import web
from tornado.iostream import StreamClosedError

from ..contracts.errors import RpcError
from ..contracts.ids import check_id
from ..handlers.base import ResolveHandler, authorized
from ..handlers.streaming import SSEWriter
from ..runs.handlers import Launcher
from ..runs.manager import RunManager
from .server import (
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PROTOCOL_VERSIONS,
    McpServer,
    Message,
    Session,
    error,
    parse_message,
    progress_notification,
    result,
)
from .tokens import GRANTS, USER_PREFIX, CreateToken, TokenStore, listing
from .tools import WorkbenchTools

SESSION_HEADER = "Mcp-Session-Id"


class ScopedAuthorizer(Authorizer):
    """What a request with an MCP-scoped token may do: :data:`GRANTS`, nothing else."""

    def is_authorized(self, handler: Any, user: User, action: str, resource: str) -> bool:
        return (action, resource) in GRANTS


def token_store(handler: ResolveHandler) -> TokenStore:
    store: TokenStore | None = handler.settings.get("resolve_mcp_tokens")
    if store is None:
        store = handler.settings["resolve_mcp_tokens"] = TokenStore(handler.service("state_dir"))
    return store


class McpHandler(ResolveHandler):
    """The MCP endpoint: a handler adapting HTTP to :class:`McpServer`."""

    _scoped_authorizer = ScopedAuthorizer()
    _by_mcp_token = False

    def mcp_token_user(self) -> User | None:
        """The user of a request carrying a stored MCP-scoped token, else None."""
        scheme, _, token = self.request.headers.get("Authorization", "").strip().partition(" ")
        if scheme.lower() not in ("token", "bearer") or not token.strip():
            return None
        info = token_store(self).find(token.strip())
        return None if info is None else User(username=USER_PREFIX + info.name)

    async def prepare(self) -> None:  # type: ignore[override]
        user = self.mcp_token_user()
        if user is None:
            await super().prepare()  # Jupyter auth (the kernel token is not taken here)
            return
        if not self.check_host():
            raise web.HTTPError(403)
        # a header token is never sent by a browser on its own: no XSRF or origin check
        self.current_user = self._jupyter_current_user = user
        self._token_authenticated = True
        self._by_mcp_token = True
        self.set_cors_headers()

    @property
    def authorizer(self) -> Authorizer:
        if self._by_mcp_token:
            return self._scoped_authorizer
        return super().authorizer

    @property
    def mcp(self) -> McpServer:
        server: McpServer | None = self.settings.get("resolve_mcp")
        if server is None:
            server = self.settings["resolve_mcp"] = McpServer(WorkbenchTools(self.service("host")))
        return server

    def user_name(self) -> str:
        user = self.current_user
        return str(getattr(user, "username", None) or user)

    def ask_owner(self) -> str | None:
        """Who an ``ask`` run is for: the Jupyter user; a scoped token records no owner (its
        user name is the token's), so its runs are the server user's (the audit's user)."""
        return None if self._by_mcp_token else self.run_owner()

    def reply(self, status: int, body: dict[str, Any]) -> None:
        self.set_status(status)
        self.finish(json.dumps(body))

    @web.authenticated
    @authorized("read")
    async def post(self) -> None:
        try:
            message = parse_message(self.request.body or b"")
        except RpcError as exc:
            return self.reply(400, error(None, int(exc.code), exc.message))
        version = self.request.headers.get("MCP-Protocol-Version")
        if version and version not in PROTOCOL_VERSIONS and message.method != "server/discover":
            known = ", ".join(PROTOCOL_VERSIONS)
            text = f"MCP-Protocol-Version {version[:40]!r} is not supported ({known})"
            return self.reply(400, error(message.id, INVALID_REQUEST, text))
        if message.method == "initialize" and message.is_request:
            opened, answer = self.mcp.initialize(self.user_name(), message.params)
            self.set_header(SESSION_HEADER, opened.session_id)
            return self.reply(200, result(message.id, answer))
        if message.method == "server/discover":  # the 2026 probe: fall back to initialize
            text = "server/discover is not offered: use initialize"
            return self.reply(200, error(message.id, METHOD_NOT_FOUND, text))
        session_id = self.request.headers.get(SESSION_HEADER)
        session = self.mcp.session(session_id)
        if session is None:
            text = (
                "unknown or ended session: send initialize"
                if session_id
                else (f"no {SESSION_HEADER} header: send initialize first")
            )
            return self.reply(404 if session_id else 400, error(message.id, INVALID_REQUEST, text))
        if not message.is_request:
            await self.notified(session, message)
            self.set_status(202)
            self.finish()
            return None
        if message.method == "tools/call":
            return await self.stream_call(session, message)
        answer = await self.mcp.request(
            session, message, _no_progress, self.allowed, scoped=self._by_mcp_token
        )
        self.reply(200, answer)

    async def notified(self, session: Session, message: Message) -> None:
        """``notifications/cancelled`` for a running ``ask`` cancels its run."""
        if message.method != "notifications/cancelled":
            return
        run_id = session.runs.get(message.params.get("requestId"))  # type: ignore[arg-type]
        if run_id is not None:
            runs: RunManager = self.service("runs")
            run = runs.held(run_id)
            if run is not None and not run.completed:
                launcher: Launcher = self.service("launcher")
                await launcher.cancel_run(run_id)

    async def stream_call(self, session: Session, message: Message) -> None:
        """Answer a ``tools/call`` as an event stream: progress, keep-alives, the response. A
        client that goes away leaves an ``ask`` run running (it belongs to the gateway)."""
        sse = SSEWriter(self)
        meta = message.params.get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        count = 0
        assert message.id is not None

        async def progress(text: str) -> None:
            nonlocal count
            count += 1
            if text.startswith("run ") and text.endswith(" started"):
                session.runs[message.id] = text.split()[1]  # type: ignore[index]
            if isinstance(token, (str, int)) and not isinstance(token, bool):
                sse.data(progress_notification(token, count, text))
            else:
                sse.keepalive()
            await self.flush()

        try:
            sse.start()
            response = await self.mcp.request(
                session,
                message,
                progress,
                self.allowed,
                scoped=self._by_mcp_token,
                owner=self.ask_owner(),
            )
            sse.data(response)
            await self.flush()
        except StreamClosedError:
            return
        finally:
            session.runs.pop(message.id, None)
        sse.finish()

    @web.authenticated
    @authorized("read")
    def get(self) -> None:
        # The optional server-to-client stream is not offered (the spec's answer is 405).
        self.set_header("Allow", "POST, DELETE")
        self.reply(405, error(None, INVALID_REQUEST, "GET is not offered: POST messages"))

    @web.authenticated
    @authorized("read")
    def delete(self) -> None:
        if not self.mcp.close(self.request.headers.get(SESSION_HEADER)):
            return self.reply(404, error(None, INVALID_REQUEST, "unknown or ended session"))
        self.set_status(204)
        self.finish()


async def _no_progress(text: str) -> None:
    return None


class McpTokensHandler(ResolveHandler):
    """``GET /resolve/api/mcp-tokens`` → ``{tokens: [{id, name, created}]}``; ``POST`` ``{name?}``
    → ``{token, id, name, created}`` (the token shown this once). Managing tokens is ``resolve``
    write, for a person: the kernel token is refused."""

    def refuse_kernel_token(self) -> None:
        if self._by_kernel_token:
            raise web.HTTPError(403, "MCP tokens are managed by a person, not from a kernel")

    @web.authenticated
    @authorized("write")
    async def get(self) -> None:
        self.refuse_kernel_token()
        self.answer({"tokens": [listing(t) for t in token_store(self).tokens()]})

    @web.authenticated
    @authorized("write")
    async def post(self) -> None:
        self.refuse_kernel_token()
        body = self.parse(CreateToken)
        info, token = token_store(self).create(body.name)
        self.set_status(201)
        self.answer({"token": token, **listing(info)})


class McpTokenHandler(McpTokensHandler):
    """``DELETE /resolve/api/mcp-tokens/{id}``: revoke (204; 404 for an unknown id)."""

    @web.authenticated
    @authorized("write")
    async def delete(self, token_id: str) -> None:
        self.refuse_kernel_token()
        token_store(self).revoke(check_id("token_id", token_id))
        self.set_status(204)
        self.finish()
