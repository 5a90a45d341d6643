"""The MCP server's routes (DESIGN 9.3): the endpoint and its scoped tokens. ``handlers.py``
loads on the first request (``handlers/lazy.py``)."""

from __future__ import annotations

HANDLERS = "jupyter_resolve.mcp.handlers"
routes = [
    (r"/resolve/mcp", "McpHandler"),
    (r"/resolve/api/mcp-tokens", "McpTokensHandler"),
    (r"/resolve/api/mcp-tokens/(?P<token_id>[^/]+)", "McpTokenHandler"),
]
