"""The external agents' routes (DESIGN 10.4); ``handlers.py`` loads on the first request."""

from __future__ import annotations

HANDLERS = "jupyter_resolve.acp.handlers"
routes = [(r"/resolve/api/agents", "AgentsHandler")]
