"""Inline completion's routes (DESIGN 10.3); ``handlers.py`` loads on the first request."""

from __future__ import annotations

HANDLERS = "jupyter_resolve.completion.handlers"
routes = [
    (r"/resolve/api/completion", "CompletionHandler"),
    (r"/resolve/api/completion/usage", "CompletionUsageHandler"),
]
