"""The peer endpoint's routes. Its handlers (``handlers.py``) load on the first request
(``handlers/lazy.py``): most servers never see a peer."""

from __future__ import annotations

CARD_PATH = "resolve/.well-known/agent-card.json"
"""Where the card is served, under the server's base_url."""

JSONRPC_PATH = "resolve/peer/a2a"
"""The JSON-RPC interface the card names, under the server's base_url."""

INVOKE_PATH = "resolve/peer/invoke"
"""The signed ``{tool, arguments}`` endpoint, under the server's base_url."""

HANDLERS = "jupyter_resolve.peer.handlers"
routes = [
    ("/" + CARD_PATH.replace(".", r"\."), "AgentCardHandler"),
    ("/" + JSONRPC_PATH, "JsonRpcHandler"),
    ("/" + INVOKE_PATH, "InvokeHandler"),
]
STREAMED_BODY = frozenset(("JsonRpcHandler", "InvokeHandler"))
"""The handlers marked ``@web.stream_request_body``: tornado asks the stand-in whether to stream
a body, so the stand-in carries the mark too (a test keeps them equal)."""
