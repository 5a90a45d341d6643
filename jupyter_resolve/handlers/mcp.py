"""``<base_url>resolve/mcp``: the workbench as an MCP server over streamable HTTP (DESIGN 9.3).

Jupyter authenticates every request (the token header MCP clients send, or a hub's) and the
Authorizer decides (DESIGN 9.4): speaking MCP at all is ``resolve`` read; ``ask`` also needs
execute, ``notebook_read`` ``contents`` read. POST carries one JSON-RPC message: a notification
is accepted (202), a ``tools/call`` is answered as an event stream (progress notifications while
``ask`` runs, then the response), anything else as JSON. GET offers no server stream (405);
DELETE ends the session.
"""

from __future__ import annotations

import json
from typing import Any

from tornado import web
from tornado.iostream import StreamClosedError

from ..contracts.errors import RpcError
from ..mcp.server import (
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
from ..mcp.tools import WorkbenchTools
from .base import ResolveHandler, authorized
from .streaming import SSEWriter

SESSION_HEADER = "Mcp-Session-Id"


class McpHandler(ResolveHandler):
    """The MCP endpoint: a handler adapting HTTP to :class:`McpServer`."""

    @property
    def mcp(self) -> McpServer:
        server: McpServer | None = self.settings.get("resolve_mcp")
        if server is None:
            server = self.settings["resolve_mcp"] = McpServer(WorkbenchTools(self.gateway))
        return server

    def user_name(self) -> str:
        user = self.current_user
        return str(getattr(user, "username", None) or user)

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
        self.reply(200, await self.mcp.request(session, message, _no_progress, self.allowed))

    async def notified(self, session: Session, message: Message) -> None:
        """``notifications/cancelled`` for a running ``ask`` cancels its run."""
        if message.method != "notifications/cancelled":
            return
        run_id = session.runs.get(message.params.get("requestId"))  # type: ignore[arg-type]
        if run_id is not None:
            run = self.gateway.runs.runs.get(run_id)
            if run is not None and not run.completed:
                await self.gateway.cancel_run(run_id)

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
            response = await self.mcp.request(session, message, progress, self.allowed)
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


routes: list[tuple[str, Any]] = [(r"/resolve/mcp", McpHandler)]
