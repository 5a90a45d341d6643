"""Every public route the extension serves, in the order tornado matches them: each service's
own table (its ``handlers.py``, or for a service loaded on first use its light ``routes.py``),
gathered here and nowhere else. ``extension.py`` serves them; the tests read them."""

from __future__ import annotations

from typing import Any


def public_routes() -> list[tuple[str, Any]]:
    """``(pattern, handler class)`` of every route under ``/resolve/`` but the runtime's own
    (served on the gateway's loopback listener). A lazily loaded service's class is a stand-in
    (``handlers/lazy.py``) that imports its handlers on the first request."""
    from .acp import routes as acp
    from .artifacts import routes as artifacts
    from .completion import routes as completion
    from .facade import handlers as facade
    from .gateway_handlers import routes as gateway
    from .handlers.lazy import lazy_routes
    from .mcp import routes as mcp
    from .notebook import handlers as notebook
    from .peer import routes as peer
    from .runs import handlers as runs

    return [
        *runs.routes,
        *notebook.routes,
        *gateway,
        # loaded on their first request: most servers never use them, or not soon
        *lazy_routes([artifacts, peer, completion, acp, mcp]),
        *facade.routes,  # last: its catch-all answers any other /resolve/v1/ path
    ]
