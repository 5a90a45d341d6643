"""``python -m jupyter_resolve.hub [upgrade-db]``: the organization's model service under
JupyterHub.

Reads its settings (:mod:`.settings`), migrates the usage database (or, with ``upgrade-db``, only
that), listens where JupyterHub says (``$JUPYTERHUB_SERVICE_URL``) and serves the routes under
its prefix until SIGTERM; SIGHUP, or a change of the config file or a key file, reads the
limits, prices and keys again. It refuses to start
without an access scope (any hub token would get in) or with a config it cannot use, saying
why in one line.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import signal
import sys
from pathlib import Path
from urllib.parse import urlsplit

from tornado import web

from .._version import __version__
from ..contracts.errors import ResolveError
from .admin import AdminPageHandler, AdminUsageHandler, OAuthCallbackHandler
from .database import head, make_engine, revision, shown, upgrade
from .handlers import (
    CompletionsHandler,
    ForwardHandler,
    HealthHandler,
    InfoHandler,
    MessagesHandler,
    ModelsHandler,
    UsageHandler,
    log_request,
)
from .service import Service
from .settings import ResolveHub

LOG = logging.getLogger("jupyter_resolve.hub")
LOG_FORMAT = "[%(levelname)1.1s %(asctime)s.%(msecs)03d %(name)s] %(message)s"


def cookie_secret(config: ResolveHub) -> bytes:
    if config.cookie_secret_file:
        return Path(config.cookie_secret_file).read_bytes().strip()
    return secrets.token_bytes(32)


def make_app(service: Service) -> web.Application:
    prefix = service.config.prefix
    args = {"service": service}
    return web.Application(
        [
            (prefix, InfoHandler),
            (f"{prefix}health", HealthHandler, args),
            (f"{prefix}health/live", HealthHandler, {**args, "live": True}),
            (f"{prefix}v1/chat/completions", ForwardHandler, args),
            (f"{prefix}v1/completions", CompletionsHandler, args),
            (f"{prefix}v1/messages", MessagesHandler, args),
            (f"{prefix}v1/models", ModelsHandler, args),
            (f"{prefix}usage", UsageHandler, args),
            (f"{prefix}admin/usage", AdminUsageHandler, args),
            (f"{prefix}admin", AdminPageHandler, args),
            (f"{prefix}oauth_callback", OAuthCallbackHandler, args),
        ],
        log_function=log_request,
        cookie_secret=cookie_secret(service.config),
    )


def limits_summary(config: ResolveHub) -> str:
    default, groups, users = config.specs
    shown_default = default.model_dump(exclude_none=True) or "unlimited"
    return (
        f"default {shown_default}, {len(groups)} group entries, {len(users)} user entries, "
        f"max_concurrent {config.max_concurrent}"
    )


def start_line(config: ResolveHub, migrated: tuple[str | None, str]) -> str:
    upstreams = "; ".join(
        f"{wire} {config.upstream(wire).base_url} ({config.key_source(wire)})"
        for wire in ("openai", "anthropic")
    )
    before, after = migrated
    schema = f"schema {after}" + (f", migrated from {before or 'empty'}" if before != after else "")
    return (
        f"jupyter-resolve hub service {__version__} at {config.bind_url}{config.prefix}; "
        f"upstreams: {upstreams}; database {shown(config.db_url)} ({schema}); "
        f"limits: {limits_summary(config)}"
    )


async def migrate(service: Service) -> tuple[str | None, str]:
    """Migrate (``upgrade_db``), or check the schema is the newest."""
    if service.config.upgrade_db:
        return await service.db(upgrade, service.engine)
    now = await service.db(revision, service.engine)
    if now != head():
        raise ResolveError(
            f"the usage database is at revision {now or 'empty'}, this version needs {head()}: "
            "run `python -m jupyter_resolve.hub upgrade-db` (or set ResolveHub.upgrade_db)"
        )
    return now, now


def reload(config: ResolveHub, why: str = "SIGHUP") -> None:
    try:
        config.reload()
    except ResolveError as exc:
        LOG.error("%s: the config was not reloaded, the old limits stay: %s", why, exc)
        return
    LOG.info("%s: config reloaded; limits: %s", why, limits_summary(config))


async def watch_files(config: ResolveHub) -> None:
    """Reload when the config file or a key file changed (``reload_interval``)."""
    seen = config.watched_files()
    while True:
        await asyncio.sleep(config.reload_interval)
        now = config.watched_files()
        if now != seen:
            seen = now
            reload(config, "the config or a key file changed")


async def serve(config: ResolveHub) -> None:
    service = Service(config)
    try:
        migrated = await migrate(service)
        app = make_app(service)
        where = urlsplit(config.bind_url)
        size = config.max_body_size
        server = app.listen(
            where.port or 80,
            where.hostname or "127.0.0.1",
            xheaders=True,
            max_body_size=size,
            max_buffer_size=size,
        )
        LOG.info("%s", start_line(config, migrated))
        loop = asyncio.get_running_loop()
        upkeep = [loop.create_task(service.upkeep())]
        if config.reload_interval > 0:
            upkeep.append(loop.create_task(watch_files(config)))
        stop = asyncio.Event()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stop.set)
        loop.add_signal_handler(signal.SIGHUP, reload, config)
        await stop.wait()
        LOG.info("stopping")
        server.stop()
        for task in upkeep:
            task.cancel()
    finally:
        await service.aclose()


def upgrade_db(config: ResolveHub) -> None:
    engine = make_engine(config.db_url, 1)
    try:
        before, after = upgrade(engine)
    finally:
        engine.dispose()
    said = "already at" if before == after else f"migrated from {before or 'empty'} to"
    LOG.info("usage database %s: %s revision %s", shown(config.db_url), said, after)


def setup_logging(level: int | str) -> None:
    if not LOG.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter(LOG_FORMAT, "%Y-%m-%d %H:%M:%S"))
        LOG.addHandler(handler)
        LOG.propagate = False
    LOG.setLevel(level)


def main(argv: list[str] | None = None) -> None:
    app = ResolveHub.instance()
    setup_logging(logging.INFO)
    try:
        app.initialize(argv)
        level = app.log_level
        setup_logging(level if isinstance(level, (int, str)) else logging.INFO)
        if app.subcommand_name == "upgrade-db":
            upgrade_db(app)
            return
        asyncio.run(serve(app))
    except ResolveError as exc:
        LOG.critical("jupyter-resolve hub service not started: %s", exc)
        sys.exit(1)
