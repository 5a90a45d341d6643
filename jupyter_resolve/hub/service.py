"""What the hub service's handlers share: its settings, the usage store (on threads of its own:
the database never blocks the event loop), one HTTP client, and JupyterHub's ``HubOAuth`` (the
user behind a token or the admin page's login cookie, and their groups)."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from functools import partial
from typing import Any, TypeVar
from urllib.parse import urlsplit

import httpx

from ..contracts.errors import ResolveError
from ..providers.raw_http import ConnectionPool
from .budgets import UsageStore
from .database import make_engine, ping
from .settings import ResolveHub

T = TypeVar("T")
GROUPS_TTL = 60.0  # seconds a user's group list is kept before the hub is asked again
GROUPS_KEPT = 4096  # users whose groups are kept at once
UPSTREAM_CHECK_EVERY = 30.0
CONNECT_TIMEOUT = 2.0


class NoAccessScope(ResolveError, RuntimeError):
    """Started with no access scope: any hub token would get in."""

    code = "no_access_scope"


def access_scopes_of(environ: Mapping[str, str]) -> set[str]:
    """The scopes a caller's token needs, as JupyterHub tells a service (``HubAuth``'s own
    rule): ``$JUPYTERHUB_OAUTH_ACCESS_SCOPES``, else its service name's access scope."""
    listed = environ.get("JUPYTERHUB_OAUTH_ACCESS_SCOPES") or environ.get("JUPYTERHUB_OAUTH_SCOPES")
    if listed:
        try:
            scopes = json.loads(listed)
        except ValueError:
            scopes = None
        return {str(s) for s in scopes} if isinstance(scopes, list) else set()
    name = environ.get("JUPYTERHUB_SERVICE_NAME")
    return {f"access:services!service={name}"} if name else set()


def hub_auth(environ: Mapping[str, str] = os.environ) -> Any:
    """JupyterHub's auth for this service: ``HubOAuth`` (tokens, and the admin page's login)
    when the hub gave it an OAuth client, else ``HubAuth`` (tokens only). Refuses to start
    with no access scope (any hub token would get in) or no API token."""
    from jupyterhub.services.auth import HubAuth, HubOAuth  # type: ignore[import-untyped]

    scopes = access_scopes_of(environ)
    if not scopes:
        raise NoAccessScope(
            "no access scope: neither $JUPYTERHUB_OAUTH_ACCESS_SCOPES nor "
            "$JUPYTERHUB_SERVICE_NAME is set, so any hub token would get in; run the service "
            "under JupyterHub (c.JupyterHub.services), or set JUPYTERHUB_SERVICE_NAME to its name"
        )
    token = environ.get("JUPYTERHUB_API_TOKEN", "")
    if not token:
        raise NoAccessScope(
            "$JUPYTERHUB_API_TOKEN is not set: the service cannot ask the hub whose a token is "
            "(give it the api_token of its entry in c.JupyterHub.services)"
        )
    kind = HubOAuth if environ.get("JUPYTERHUB_CLIENT_ID") else HubAuth
    return kind(api_token=token, access_scopes=scopes)


class Service:
    """What the handlers share: the config, the usage store, the HTTP client, hub auth."""

    def __init__(self, config: ResolveHub) -> None:
        self.config = config
        self.hub_auth = hub_auth()
        self.engine = make_engine(config.db_url, config.db_threads)
        self.engine = make_engine(config.db_url, config.db_threads)
        self.store = UsageStore(self.engine, ttl=config.reservation_ttl)
        self.pool = ThreadPoolExecutor(config.db_threads, thread_name_prefix="resolve-hub-db")
        self.client = httpx.AsyncClient(
            timeout=httpx.Timeout(600, connect=10),
            limits=httpx.Limits(max_connections=None, max_keepalive_connections=100),
            trust_env=True,
        )
        self.raw_pool = ConnectionPool()  # kept-alive connections to a plain-HTTP upstream
        self.log = logging.getLogger("jupyter_resolve.hub")
        self._groups: dict[str, tuple[float, list[str]]] = {}
        self._upstreams: dict[str, tuple[float, bool]] = {}

    @staticmethod
    def now() -> datetime:
        return datetime.now(timezone.utc)

    async def db(self, work: Callable[..., T], *args: Any) -> T:
        """Run a blocking database call on the service's database threads."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.pool, partial(work, *args))

    async def upkeep(self) -> None:
        """Forever: keep this replica's reservations alive and charge the ones of replicas
        that died (every third of the reservations' lifetime)."""
        while True:
            try:
                await self.db(self.store.heartbeat)
                charged = await self.db(self.store.expire)
                if charged:
                    self.log.warning(
                        "charged %d reservations in full: their replica stopped renewing them",
                        charged,
                    )
            except Exception as exc:  # the database is away: health says so; try again later
                self.log.error("database upkeep failed: %s", exc)
            await asyncio.sleep(self.config.reservation_ttl / 3)

    async def groups(self, user: dict[str, Any]) -> list[str]:
        """The user's groups: from their model when the token shows them, else asked of the
        hub with the service's own token (needs read:users:groups), kept a minute."""
        if isinstance(user.get("groups"), list):
            return [str(g) for g in user["groups"]]
        name = str(user["name"])
        if not self.config.group_limits:
            return []
        kept = self._groups.get(name)
        if kept and time.monotonic() - kept[0] < GROUPS_TTL:
            return kept[1]
        url = f"{self.hub_auth.api_url.rstrip('/')}/users/{name}"
        headers = {"Authorization": f"token {self.hub_auth.api_token}"}
        try:
            answer = await self.client.get(url, headers=headers)
            found = answer.json().get("groups") if answer.status_code == 200 else None
        except (httpx.HTTPError, ValueError):
            found = None
        if not isinstance(found, list):
            self.log.warning("cannot read %s's groups from the hub: group limits not applied", name)
            return []
        groups = [str(g) for g in found]
        if len(self._groups) >= GROUPS_KEPT:
            self._groups.clear()
        self._groups[name] = (time.monotonic(), groups)
        return groups

    async def database_ok(self) -> str | None:
        """None when the database answers, else why not."""
        try:
            await asyncio.wait_for(self.db(ping, self.engine), 5)
        except Exception as exc:
            return f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"
        return None

    async def upstream_ok(self, base_url: str) -> bool:
        """Whether a TCP connection to the upstream opens (checked at most every 30 s)."""
        kept = self._upstreams.get(base_url)
        if kept and time.monotonic() - kept[0] < UPSTREAM_CHECK_EVERY:
            return kept[1]
        parts = urlsplit(base_url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        try:
            _, writer = await asyncio.wait_for(
                asyncio.open_connection(parts.hostname or "", port), CONNECT_TIMEOUT
            )
            writer.close()
            ok = True
        except (OSError, asyncio.TimeoutError):
            ok = False
        self._upstreams[base_url] = (time.monotonic(), ok)
        return ok

    async def aclose(self) -> None:
        self.raw_pool.close()
        await self.client.aclose()
        self.pool.shutdown(wait=True)
        self.store.close()
