"""What every ``/resolve/v1/`` handler shares: errors in OpenAI's shape (``openai`` and the
tools built on it read ``error.message``), for our errors, tornado's and jupyter_server's alike,
and the models the facade offers (``GET /resolve/v1/models``, ``/models/{id}``); a catch-all
answers any other ``/resolve/v1/`` path with a JSON 404, never Jupyter's HTML page."""

from __future__ import annotations

import json
import time
from typing import Any

from tornado import web

from ..contracts.errors import ResolveError
from ..contracts.facade_models import find_model, model_list, openai_error
from .base import ResolveHandler, authorized
from .errors import raised

STARTED = int(time.time())


class FacadeHandler(ResolveHandler):
    """Base of the facade's handlers: ``resolve`` read for GETs."""

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        exc = raised(kwargs)
        if isinstance(exc, ResolveError):
            status, message, code = exc.status, exc.message, str(exc.code)
        elif isinstance(exc, web.HTTPError):
            status, code = exc.status_code, None
            message = exc.log_message % exc.args if exc.log_message else (exc.reason or "")
            message = message or self._reason
        else:
            status, message, code = status_code, self._reason, None
        self.set_status(status)
        self.set_cors_headers()
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(openai_error(status, message, code)))

    @property
    def created(self) -> int:
        """When the facade's models came to be: when this server started."""
        return STARTED


class ModelsHandler(FacadeHandler):
    """``GET /resolve/v1/models``: ``resolve`` and ``resolve/<soul>`` for each soul."""

    @web.authenticated
    @authorized("read")
    async def get(self) -> None:
        self.answer(model_list(self.gateway.souls, self.created))


class ModelHandler(FacadeHandler):
    """``GET /resolve/v1/models/{id}`` (the id may hold a ``/``: ``resolve/<soul>``)."""

    @web.authenticated
    @authorized("read")
    async def get(self, model_id: str) -> None:
        self.answer(find_model(model_id, self.gateway.souls, self.created))


class NotFoundHandler(FacadeHandler):
    """Any other ``/resolve/v1/`` path, with any method: a 404 in OpenAI's shape."""

    @web.authenticated
    @authorized("read")
    async def get(self, rest: str = "") -> None:
        raise web.HTTPError(404, f"no such endpoint: {self.request.method} {self.request.path}")

    post = put = patch = delete = get


routes: list[tuple[str, Any]] = [
    (r"/resolve/v1/models", ModelsHandler),
    (r"/resolve/v1/models/(?P<model_id>.+)", ModelHandler),
]

catch_all: list[tuple[str, Any]] = [
    (r"/resolve/v1", NotFoundHandler),
    (r"/resolve/v1/(?P<rest>.*)", NotFoundHandler),
]
"""After every other ``/resolve/v1/`` route."""
