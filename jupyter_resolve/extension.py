"""The Jupyter server extension: wires the gateway into the server's lifecycle and routes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jupyter_server.extension.application import ExtensionApp

from .config import Resolve
from .gateway import Gateway
from .handlers import api, artifacts, facade, peer


class ResolveExtension(ExtensionApp):
    """jupyter-resolve's server extension (settings live on the ``Resolve`` class)."""

    name = "jupyter_resolve"
    description = "A research workbench inside Jupyter."
    load_other_extensions = True
    classes = [Resolve]  # noqa: RUF012 (traitlets declares it an instance list)
    gateway: Gateway

    def initialize_settings(self) -> None:
        config = Resolve(parent=self)
        assert self.serverapp is not None
        root = Path(self.serverapp.root_dir).expanduser().resolve()
        self.gateway = Gateway(config, root_dir=root, log=self.log)
        self.settings["resolve"] = self.gateway

    def initialize_handlers(self) -> None:
        handlers: list[tuple[str, Any]] = [
            *api.routes,
            *facade.routes,
            *artifacts.routes,
            *peer.routes,
        ]
        self.handlers.extend(handlers)

    async def _start_jupyter_server_extension(self, serverapp: Any) -> None:
        await self.gateway.start()

    async def stop_extension(self) -> None:
        await self.gateway.stop()
