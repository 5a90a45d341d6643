"""``python -m jupyter_resolve.hub``: the organization's model service under JupyterHub.

Reads its settings (:mod:`.settings`), listens where JupyterHub says
(``$JUPYTERHUB_SERVICE_URL``) and serves :mod:`.handlers` under its prefix until SIGTERM.
"""

from __future__ import annotations

import asyncio
import signal
from urllib.parse import urlsplit

from .handlers import make_app
from .service import Service
from .settings import ResolveHub


async def serve(config: ResolveHub) -> None:
    service = Service(config)
    app = make_app(service)
    where = urlsplit(config.bind_url)
    server = app.listen(where.port or 80, where.hostname or "127.0.0.1", xheaders=True)
    config.log.info("jupyter-resolve hub service at %s%s", config.bind_url, config.prefix)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    await stop.wait()
    server.stop()
    await service.aclose()


def main(argv: list[str] | None = None) -> None:
    app = ResolveHub.instance()
    app.initialize(argv)
    asyncio.run(serve(app))
