"""Routes whose handler module loads on its first request (issue 21: the extension's load).

Tornado needs a handler class when a route is added; the artifact store, the A2A peer endpoints
and the MCP server pull in modules (pydantic models, JSON-RPC, signing, the MCP tool schemas)
that most servers never use, or not soon. A
route here names its handler by module and class; the stand-in class added to the server
imports that module on the first request and builds the real handler, which then does all the
work (authentication, ``@authorized``, XSRF checks are on it, unchanged).

The stand-in defines no HTTP method, so jupyter_server's start-up check of undecorated methods
has nothing to inspect on it; the real classes are checked by ``tests/.../test_contracts.py``.
A test keeps :data:`LAZY_ROUTES` equal to the modules' own ``routes``.
"""

from __future__ import annotations

import importlib
from typing import Any

from tornado import web

# module → [(pattern, class name)], the same as that module's ``routes``
LAZY_ROUTES: dict[str, list[tuple[str, str]]] = {
    "jupyter_resolve.handlers.artifacts": [
        (r"/resolve/api/artifacts", "ArtifactsHandler"),
        (r"/resolve/api/artifacts/(?P<art_id>[^/]+)", "ArtifactHandler"),
        (r"/resolve/api/artifacts/(?P<art_id>[^/]+)/content", "ArtifactContentHandler"),
    ],
    "jupyter_resolve.handlers.peer": [
        (r"/resolve/\.well-known/agent-card\.json", "AgentCardHandler"),
        ("/resolve/peer/a2a", "JsonRpcHandler"),
        ("/resolve/peer/invoke", "InvokeHandler"),
    ],
    "jupyter_resolve.handlers.completion": [
        (r"/resolve/api/completion", "CompletionHandler"),
        (r"/resolve/api/completion/usage", "CompletionUsageHandler"),
    ],
    "jupyter_resolve.handlers.agents": [
        (r"/resolve/api/agents", "AgentsHandler"),
    ],
    "jupyter_resolve.handlers.mcp": [
        (r"/resolve/mcp", "McpHandler"),
        (r"/resolve/api/mcp-tokens", "McpTokensHandler"),
        (r"/resolve/api/mcp-tokens/(?P<token_id>[^/]+)", "McpTokenHandler"),
    ],
}

STREAMED_BODY = frozenset(
    ("jupyter_resolve.handlers.peer", name) for name in ("JsonRpcHandler", "InvokeHandler")
)
"""The handlers marked ``@web.stream_request_body``: tornado asks the stand-in (the class in the
route) whether to stream the body, so the stand-in carries the mark too (a test keeps them
equal)."""


class LazyHandler(web.RequestHandler):
    """Stands in for ``target_module.target_name`` until a request comes."""

    target_module = ""
    target_name = ""

    @classmethod
    def target(cls) -> type[web.RequestHandler]:
        """The real handler class (imports its module the first time)."""
        found: type[web.RequestHandler] = getattr(
            importlib.import_module(cls.target_module), cls.target_name
        )
        return found

    def __new__(cls, application: web.Application, request: Any, **kwargs: Any) -> Any:
        # an object that is not a LazyHandler: Python then skips LazyHandler.__init__
        return cls.target()(application, request, **kwargs)


def lazy_handler(module: str, name: str) -> type[LazyHandler]:
    streamed = (module, name) in STREAMED_BODY
    namespace = {"target_module": module, "target_name": name, "_stream_request_body": streamed}
    return type(name, (LazyHandler,), namespace)


def lazy_routes() -> list[tuple[str, Any]]:
    """Every route of :data:`LAZY_ROUTES`, each with its stand-in."""
    return [
        (pattern, lazy_handler(module, name))
        for module, routes in LAZY_ROUTES.items()
        for pattern, name in routes
    ]
