"""What the extension serves when it could not set itself up (an invalid ``c.Resolve``
setting): the server goes on serving, as jupyter_server does for a failing extension, and
``/resolve/api/health`` says why; every other ``/resolve/`` route answers 503 with the same
reason. A feature the administrator's policy switched off answers 403 ``locked`` with its own
reason (:func:`locked_routes`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, cast

from jupyter_server.auth.decorator import authorized as jupyter_authorized
from jupyter_server.base.handlers import APIHandler
from tornado import web

from .._version import __version__

# jupyter_server's @authorized, typed (base.py has the same; importing it loads the gateway)
authorized = cast("Callable[[str], Callable[[Any], Any]]", jupyter_authorized)


class DisabledHandler(APIHandler):
    """``/resolve/...`` while jupyter-resolve is disabled (Jupyter-authenticated)."""

    auth_resource = "resolve"
    status = 503
    code = "disabled"

    @property
    def reason(self) -> str:
        return cast("str", self.settings.get("resolve_disabled", "jupyter-resolve is disabled"))

    def _unavailable(self) -> None:
        self.set_status(self.status)
        self.finish(json.dumps({"error": {"code": self.code, "message": self.reason}}))

    @web.authenticated
    @authorized("read")
    def get(self, *args: Any) -> None:
        self._unavailable()

    @web.authenticated
    @authorized("read")
    def post(self, *args: Any) -> None:
        self._unavailable()

    @web.authenticated
    @authorized("read")
    def delete(self, *args: Any) -> None:
        self._unavailable()


class DisabledHealthHandler(DisabledHandler):
    """``GET /resolve/api/health``: not ok, and the reason, among the config problems."""

    @web.authenticated
    @authorized("read")
    def get(self, *args: Any) -> None:
        self.finish(
            json.dumps(
                {
                    "ok": False,
                    "version": __version__,
                    "disabled": self.reason,
                    "config_problems": [self.reason],
                }
            )
        )


class LockedHandler(DisabledHandler):
    """A route of a feature the administrator's policy switched off (admin_policy.py)."""

    status = 403
    code = "locked"
    locked_reason = "switched off, set by the administrator"

    def initialize(self, reason: str) -> None:
        self.locked_reason = reason

    @property
    def reason(self) -> str:
        return self.locked_reason


def locked_routes(patterns: list[str], reason: str) -> list[tuple[str, Any, dict[str, str]]]:
    """Each of ``patterns`` answered by :class:`LockedHandler` with ``reason``."""
    return [(pattern, LockedHandler, {"reason": reason}) for pattern in patterns]


routes: list[tuple[str, Any]] = [
    (r"/resolve/api/health", DisabledHealthHandler),
    (r"/resolve/(.*)", DisabledHandler),
]
