"""Routes whose handler module loads on its first request (issue 21: the extension's load).

Tornado needs a handler class when a route is added; the artifact store, the A2A peer endpoints,
the MCP server, external agents and inline completion pull in modules (pydantic models,
JSON-RPC, signing, the MCP tool schemas) that most servers never use, or not soon. Such a
service keeps its route table in a light ``routes.py`` beside its ``handlers.py``: each route
names its handler class, and the stand-in class added to the server imports ``handlers.py`` on
the first request and builds the real handler, which then does all the work (authentication,
``@authorized``, XSRF checks are on it, unchanged).

The stand-in defines no HTTP method, so jupyter_server's start-up check of undecorated methods
has nothing to inspect on it; the real classes are checked by ``tests/.../test_contracts.py``.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from types import ModuleType
from typing import Any

from tornado import web


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


def lazy_handler(module: str, name: str, streamed: bool = False) -> type[LazyHandler]:
    """A stand-in for ``module.name``; ``streamed``: the handler streams its request body."""
    namespace = {"target_module": module, "target_name": name, "_stream_request_body": streamed}
    return type(name, (LazyHandler,), namespace)


def lazy_routes(tables: Iterable[ModuleType]) -> list[tuple[str, Any]]:
    """Every route of the route tables (``routes.py`` modules: ``HANDLERS``, the handlers'
    module; ``routes``, ``(pattern, class name)``; ``STREAMED_BODY``, the names of those that
    stream their body), each with its stand-in."""
    found: list[tuple[str, Any]] = []
    for table in tables:
        streamed: frozenset[str] = getattr(table, "STREAMED_BODY", frozenset())
        for pattern, name in table.routes:
            found.append((pattern, lazy_handler(table.HANDLERS, name, name in streamed)))
    return found
