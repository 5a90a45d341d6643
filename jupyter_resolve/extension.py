"""The Jupyter server extension: wires the gateway into the server's lifecycle and routes.

Importing this module loads only the settings class: the gateway and the handlers load when
the server initializes the extension, so a server (or ``jupyter server --help``) that never
enables it pays nothing for them.
"""

from __future__ import annotations

import asyncio
import os
import secrets
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jupyter_server.extension.application import ExtensionApp

from .config import Resolve
from .magics.client import TOKEN_ENV, URL_ENV

if TYPE_CHECKING:
    from .gateway import Gateway


def kernel_url(serverapp: Any) -> str:
    """The server's URL with base_url, as a kernel on this machine reaches it."""
    ip = serverapp.ip or ""
    host = {"": "127.0.0.1", "0.0.0.0": "127.0.0.1", "*": "127.0.0.1", "::": "::1"}.get(ip, ip)
    if ":" in host:
        host = f"[{host}]"
    scheme = "https" if serverapp.certfile else "http"
    base_url = "/" + str(serverapp.base_url or "/").strip("/")
    return f"{scheme}://{host}:{serverapp.port}{base_url.rstrip('/')}/"


class ResolveExtension(ExtensionApp):
    """jupyter-resolve's server extension (settings live on the ``Resolve`` class)."""

    name = "jupyter_resolve"
    description = "A research workbench inside Jupyter."
    load_other_extensions = True
    classes = [Resolve]  # noqa: RUF012 (traitlets declares it an instance list)
    gateway: Gateway
    kernel_token: str = ""

    def initialize_settings(self) -> None:
        from .gateway import Gateway
        from .handlers import internal
        from .notebook.kernels import UserKernels

        config = Resolve(parent=self)
        assert self.serverapp is not None
        root = Path(self.serverapp.root_dir).expanduser().resolve()
        self.gateway = Gateway(config, root_dir=root, log=self.log)
        self.gateway.user_kernels = UserKernels(self.serverapp, self.log)
        self.gateway.route_internal(internal.internal_routes(self.gateway), internal.log_request)
        self.settings["resolve"] = self.gateway
        # Kernels this server starts inherit both (DESIGN 2, 8); the token is accepted only by
        # the /resolve/api handlers, never by the rest of Jupyter.
        self.kernel_token = secrets.token_urlsafe(32)
        self.settings["resolve_kernel_token"] = self.kernel_token
        self.export_kernel_env()

    def export_kernel_env(self) -> None:
        """Put ``JUPYTER_RESOLVE_URL`` and ``JUPYTER_RESOLVE_TOKEN`` in the server's environment."""
        assert self.serverapp is not None
        os.environ[URL_ENV] = kernel_url(self.serverapp)
        os.environ[TOKEN_ENV] = self.kernel_token

    def initialize_handlers(self) -> None:
        from .handlers import api, facade
        from .handlers.lazy import lazy_routes

        handlers: list[tuple[str, Any]] = [
            *api.routes,
            *facade.routes,
            *lazy_routes(),  # artifacts, the A2A peer, the MCP server: loaded on first request
        ]
        self.handlers.extend(handlers)

    async def _start_jupyter_server_extension(self, serverapp: Any) -> None:
        self.export_kernel_env()  # the port is final once the server listens
        await self.gateway.start()
        if self.gateway.config.freeze_startup_objects:
            from .startup_gc import freeze_startup_objects

            # the next turn of the loop: after the other extensions' start hooks of this turn
            asyncio.get_running_loop().call_soon(freeze_startup_objects, self.log)

    async def stop_extension(self) -> None:
        if os.environ.get(TOKEN_ENV) == self.kernel_token:
            os.environ.pop(TOKEN_ENV, None)
            os.environ.pop(URL_ENV, None)
        await self.gateway.stop()
