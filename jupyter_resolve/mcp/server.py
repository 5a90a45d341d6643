"""The MCP server's protocol: JSON-RPC messages, sessions and methods (streamable HTTP, the
2025 revisions; the handler in mcp/handlers.py carries it over HTTP).

A client sends ``initialize`` and gets a session (the ``Mcp-Session-Id`` header, an unguessable
id); every later request names it, and is authenticated and authorized on its own (a Jupyter
token without a hub names no stable user, so a session is not tied to one). ``tools/*`` and
``resources/*`` are the workbench's (:mod:`.tools`); ``ping`` answers; a client probing for
the 2026 revision (``server/discover``) is told the method is not here, and falls back to
``initialize``.
"""

from __future__ import annotations

import secrets
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from .._version import __version__
from ..contracts.errors import ResolveError, RpcError, TooDeep
from ..contracts.ownership import OTHERS, Viewer
from ..contracts.safejson import loads
from .tools import TOOLS, Allowed, Progress, WorkbenchTools

PROTOCOL_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26")
MAX_SESSIONS = 256

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
RESOURCE_NOT_FOUND = -32002

INSTRUCTIONS = (
    "jupyter-resolve: a research workbench inside Jupyter. 'ask' runs its agent (it plans, runs "
    "Python in a scratch kernel of its own, and answers); the other tools read its runs, promoted "
    "artifacts, notebooks and souls. Runs and artifacts are also resources."
)


@dataclass
class Message:
    """One JSON-RPC message from the client: a request (``id`` set) or a notification."""

    method: str | None
    params: dict[str, Any]
    id: str | int | None = None
    is_request: bool = False


@dataclass
class Session:
    session_id: str
    user: str
    protocol_version: str
    client: dict[str, Any] = field(default_factory=dict)
    started: float = field(default_factory=time.time)
    runs: dict[str | int, str] = field(default_factory=dict)  # request id → run id (ask)


def parse_message(raw: bytes) -> Message:
    """Read one JSON-RPC message; :class:`RpcError` for what is not one."""
    try:
        body = loads(raw)
    except (TooDeep, ValueError) as exc:
        raise RpcError(PARSE_ERROR, f"not valid JSON: {exc}") from exc
    if isinstance(body, list):
        raise RpcError(INVALID_REQUEST, "batches are not supported: send one message a request")
    if not isinstance(body, dict) or body.get("jsonrpc") != "2.0":
        raise RpcError(INVALID_REQUEST, 'a JSON-RPC message is an object with "jsonrpc": "2.0"')
    method = body.get("method")
    if method is None and ("result" in body or "error" in body):
        return Message(method=None, params={})  # a response to us: we send no requests
    if not isinstance(method, str):
        raise RpcError(INVALID_REQUEST, '"method" must be a string')
    params = body.get("params") or {}
    if not isinstance(params, dict):
        raise RpcError(INVALID_PARAMS, '"params" must be an object')
    if "id" not in body:
        return Message(method=method, params=params)
    message_id = body["id"]
    if isinstance(message_id, bool) or not isinstance(message_id, (str, int)):
        raise RpcError(INVALID_REQUEST, '"id" must be a string or a number')
    return Message(method=method, params=params, id=message_id, is_request=True)


def result(message_id: Any, value: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": message_id, "result": value}


def error(message_id: Any, code: int, text: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": message_id, "error": {"code": code, "message": text}}


def progress_notification(token: str | int, progress: int, text: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": token, "progress": progress, "message": text},
    }


class McpServer:
    """Sessions and methods over the workbench's tools."""

    def __init__(self, tools: WorkbenchTools) -> None:
        self.tools = tools
        self.sessions: OrderedDict[str, Session] = OrderedDict()

    def initialize(self, user: str, params: dict[str, Any]) -> tuple[Session, dict[str, Any]]:
        wanted = params.get("protocolVersion")
        version = wanted if wanted in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[0]
        client = params.get("clientInfo")
        session = Session(
            session_id=secrets.token_urlsafe(24),
            user=user,
            protocol_version=version,
            client=client if isinstance(client, dict) else {},
        )
        self.sessions[session.session_id] = session
        while len(self.sessions) > MAX_SESSIONS:  # the oldest goes; its client starts again
            self.sessions.popitem(last=False)
        answer = {
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": False}, "resources": {"listChanged": False}},
            "serverInfo": {"name": "jupyter-resolve", "version": __version__},
            "instructions": INSTRUCTIONS,
        }
        return session, answer

    def session(self, session_id: str | None) -> Session | None:
        return self.sessions.get(session_id or "")

    def close(self, session_id: str | None) -> bool:
        return self.sessions.pop(session_id or "", None) is not None

    async def request(
        self,
        session: Session,
        message: Message,
        progress: Progress,
        allowed: Allowed,
        *,
        scoped: bool = False,
        owner: str | None = None,
    ) -> dict[str, Any]:
        """The response to a request of an open session (errors included); ``scoped``: made
        with an MCP-scoped token (``mcp/tokens.py``); ``owner``: who an ``ask`` run is for."""
        try:
            value = await self._method(session, message, progress, allowed, scoped, owner)
        except RpcError as exc:
            return error(message.id, int(exc.code), exc.message)
        except ResolveError as exc:
            return error(message.id, RESOURCE_NOT_FOUND, exc.message)
        return result(message.id, value)

    async def _method(
        self,
        session: Session,
        message: Message,
        progress: Progress,
        allowed: Allowed,
        scoped: bool,
        owner: str | None,
    ) -> Any:
        method, params = message.method, message.params
        if method == "ping":
            return {}
        if method == "tools/list":
            return {"tools": TOOLS}
        if method == "tools/call":
            name, arguments = params.get("name"), params.get("arguments") or {}
            if not isinstance(name, str) or not isinstance(arguments, dict):
                raise RpcError(INVALID_PARAMS, "tools/call needs 'name' and object 'arguments'")
            return await self.tools.call(
                name, arguments, progress, allowed, scoped=scoped, owner=owner
            )
        if method == "resources/list":
            return {"resources": self.tools.resources(await viewer_of(allowed, owner))}
        if method == "resources/templates/list":
            return {"resourceTemplates": TEMPLATES}
        if method == "resources/read":
            uri = params.get("uri")
            if not isinstance(uri, str):
                raise RpcError(INVALID_PARAMS, "resources/read needs a string 'uri'")
            return self.tools.read_resource(uri, await viewer_of(allowed, owner))
        if method in ("prompts/list", "logging/setLevel"):
            return {"prompts": []} if method == "prompts/list" else {}
        raise RpcError(METHOD_NOT_FOUND, f"no method '{str(method)[:64]}'")


async def viewer_of(allowed: Allowed, owner: str | None) -> Viewer:
    """Whose runs an MCP client sees (DESIGN 10.2): its person's, the ownerless, and others'
    where the Authorizer grants ``read`` on ``resolve-others`` (a scoped token: never)."""
    return Viewer(owner, await allowed("read", OTHERS))


TEMPLATES = [
    {
        "uriTemplate": "resolve://runs/{run_id}",
        "name": "run log",
        "description": "A run's normalized events, one JSON object a line.",
        "mimeType": "application/x-ndjson",
    },
    {
        "uriTemplate": "resolve://artifacts/{artifact_id}",
        "name": "artifact",
        "description": "A promoted artifact's bytes.",
    },
]
