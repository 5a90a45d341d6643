"""What the hub service's handlers share: its settings, the usage store, one HTTP client, and
JupyterHub's ``HubAuth`` (the user behind a token, and their groups)."""

from __future__ import annotations

import logging
import os
import time
from datetime import datetime, timezone
from typing import Any

import httpx

from .budgets import UsageStore
from .settings import ResolveHub

GROUPS_TTL = 60.0  # seconds a user's group list is kept before the hub is asked again


class Service:
    """What the handlers share: the config, the usage store, the HTTP client, hub auth."""

    def __init__(self, config: ResolveHub) -> None:
        from jupyterhub.services.auth import HubAuth  # type: ignore[import-untyped]

        self.config = config
        self.store = UsageStore(config.db_url)
        self.client = httpx.AsyncClient(timeout=httpx.Timeout(600, connect=10), trust_env=True)
        self.hub_auth = HubAuth(api_token=os.environ.get("JUPYTERHUB_API_TOKEN", ""))
        self.log = logging.getLogger("jupyter_resolve.hub")
        self._groups: dict[str, tuple[float, list[str]]] = {}

    @staticmethod
    def now() -> datetime:
        return datetime.now(timezone.utc)

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
        self._groups[name] = (time.monotonic(), groups)
        return groups

    async def aclose(self) -> None:
        await self.client.aclose()
        self.store.close()
