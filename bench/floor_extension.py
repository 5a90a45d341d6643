"""A bench-only Jupyter server extension: the cheapest request a chat could be.

The bench loads it beside jupyter_resolve in the servers it measures (never in a user's
server). Its ``POST /resolve-bench/floor`` is authenticated and authorized as the chat is
(``@web.authenticated``, ``@authorized`` with ``execute`` on ``resolve``), answers
``text/event-stream``, writes one ``text.delta`` event, flushes, and ends with
``run.completed``: what the chat costs with the gateway, the runtime and the provider taken
out. A second, bare tornado listener (no Jupyter: like the gateway's internal one) answers the
same on ``POST /floor``; ``GET /resolve-bench/floor`` tells its port, and where the server
imported jupyter_resolve from (a comparison checks that each side ran its own code).

So the bench can measure, side by side with the chain, the floor that jupyter_server and
tornado put under any chat on this machine (``bench/floor.py``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, cast

from jupyter_server.auth.decorator import authorized as jupyter_authorized
from jupyter_server.base.handlers import APIHandler
from jupyter_server.serverapp import ServerApp
from tornado import web
from tornado.httpserver import HTTPServer
from tornado.netutil import bind_sockets

MethodT = TypeVar("MethodT", bound=Callable[..., Any])
FIRST = b'event: text.delta\ndata: {"text": "floor"}\n\n'
LAST = b'event: run.completed\ndata: {"reason": "stop"}\n\n'


def authorized(action: str) -> Callable[[MethodT], MethodT]:
    """jupyter_server's ``@authorized``, typed (as jupyter_resolve's handlers wrap it)."""
    return cast("Callable[[MethodT], MethodT]", jupyter_authorized(action))


class FloorHandler(APIHandler):
    """``POST /resolve-bench/floor``: one event, flushed, then the end; ``GET``: the bare port
    and the folder of the jupyter_resolve this server runs."""

    auth_resource = "resolve"

    @web.authenticated
    @authorized("execute")
    async def post(self) -> None:
        self.set_header("Content-Type", "text/event-stream")
        self.set_header("Cache-Control", "no-cache")
        self.write(FIRST)
        await self.flush()
        self.finish(LAST, set_content_type="text/event-stream")  # APIHandler's default: JSON

    @web.authenticated
    @authorized("read")
    def get(self) -> None:
        self.finish(
            {"bare_port": self.settings["resolve_bench_bare_port"], "jupyter_resolve": loaded()}
        )


def loaded() -> str | None:
    """The real folder of the jupyter_resolve package this process imported (None: none)."""
    module = sys.modules.get("jupyter_resolve")
    where = getattr(module, "__file__", None)
    return str(Path(where).resolve().parent) if where else None


class BareFloorHandler(web.RequestHandler):
    """``POST /floor`` on the bare listener: the same answer, with no Jupyter at all.

    No authentication on purpose: it stands for tornado's own cost of a request, in the bench's
    servers only, on loopback, and answers a constant (nothing to read, nothing to run)."""

    async def post(self) -> None:
        self.set_header("Content-Type", "text/event-stream")
        self.write(FIRST)
        await self.flush()
        self.finish(LAST)


def _jupyter_server_extension_points() -> list[dict[str, Any]]:
    return [{"module": "bench.floor_extension"}]


def _load_jupyter_server_extension(app: ServerApp) -> None:
    sockets = bind_sockets(0, "127.0.0.1", backlog=1024)  # the gateway's internal listener's
    bare = HTTPServer(web.Application([(r"/floor", BareFloorHandler)]))
    bare.add_sockets(sockets)
    app.web_app.settings["resolve_bench_bare_port"] = sockets[0].getsockname()[1]
    base = app.web_app.settings["base_url"].rstrip("/")
    app.web_app.add_handlers(".*$", [(f"{base}/resolve-bench/floor", FloorHandler)])  # type: ignore[no-untyped-call]
