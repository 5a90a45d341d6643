"""The admin's routes: ``GET admin/usage`` (JSON, a token holding ``admin_scope``) and ``GET
admin`` (the page, :mod:`.admin_page`), which a browser opens after JupyterHub's OAuth login
as other hub services do (a hub admin, or a token holding ``admin_scope``). The users' rows
come a page at a time (``?offset=&limit=``; ``next`` is the next page's offset)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from jupyterhub.services.auth import (  # type: ignore[import-untyped]
    HubOAuth,
    HubOAuthCallbackHandler,
    HubOAuthenticated,
)
from tornado import web

from .._version import __version__
from .admin_page import page
from .budgets import day_key
from .handlers import ServiceHandler
from .limits import Spent, usage_view
from .service import Service

CHART_DAYS = 30
TOP_USERS = 10
PAGE = 200  # users a page of the listing
PAGE_MAX = 1000


async def usage_rows(
    service: Service, offset: int, limit: int
) -> tuple[list[dict[str, Any]], int | None]:
    """A page of the users who used anything this month or have a ``user_limits`` entry, by
    name, with their limits; and the offset of the next page (None: no more)."""
    now = service.now()
    spent = await service.db(service.store.spent_by_user, now)
    names = sorted(set(spent) | set(service.config.user_limits))
    rows = []
    for name in names[offset : offset + limit]:
        limits = service.config.limits(name, await service.groups({"name": name}))
        rows.append({"user": name, **usage_view(limits, spent.get(name) or Spent(), now)})
    return rows, offset + limit if offset + limit < len(names) else None


def page_of(handler: web.RequestHandler) -> tuple[int, int]:
    """``?offset=&limit=`` (at most :data:`PAGE_MAX` a page)."""
    try:
        offset = max(0, int(handler.get_query_argument("offset", "0")))
        limit = min(PAGE_MAX, max(1, int(handler.get_query_argument("limit", str(PAGE)))))
    except ValueError:
        raise web.HTTPError(400, "offset and limit are whole numbers") from None
    return offset, limit


class AdminUsageHandler(ServiceHandler):
    """``GET admin/usage``: every user's usage this month (holders of ``admin_scope``)."""

    async def get(self) -> None:
        if not self.is_admin():
            self.fail(403, "forbidden", f"{self.service.config.admin_scope} is needed")
        rows, following = await usage_rows(self.service, *page_of(self))
        self.answer({"users": rows, "next": following})


class AdminPageHandler(HubOAuthenticated, web.RequestHandler):  # type: ignore[misc]
    """``GET admin``: the usage page, for a hub admin logged in through the hub (OAuth) or a
    token holding ``admin_scope``."""

    def initialize(self, service: Service) -> None:
        self.service = service
        self.hub_auth = service.hub_auth

    async def prepare(self) -> None:
        user = await self.hub_auth.get_user(self, sync=False)
        self.current_user = self.check_hub_user(user) if user else None
        if self.current_user is None and not isinstance(self.hub_auth, HubOAuth):
            raise web.HTTPError(401, "the hub gave this service no OAuth client: send a token")

    def is_admin(self, user: dict[str, Any]) -> bool:
        scope = self.service.config.admin_scope
        return user.get("admin") is True or bool(self.hub_auth.check_scopes({scope}, user))

    @web.authenticated
    async def get(self) -> None:
        user = self.current_user
        if not self.is_admin(user):
            raise web.HTTPError(403, "only the hub's admins see everyone's usage")
        now = self.service.now()
        days = [day_key(now - timedelta(days=n)) for n in range(CHART_DAYS - 1, -1, -1)]
        daily = await self.service.db(self.service.store.daily, days)
        series = [(day, *daily.get(day, (0, 0.0))) for day in days]
        top = await self.service.db(self.service.store.top_users, now, TOP_USERS)
        offset, limit = page_of(self)
        rows, following = await usage_rows(self.service, offset, limit)
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.set_header("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
        self.finish(page(rows, series, top, __version__, following))


class OAuthCallbackHandler(HubOAuthCallbackHandler):  # type: ignore[misc]
    """``GET oauth_callback``: the end of the admin page's login, with this service's auth."""

    def initialize(self, service: Service) -> None:
        self.hub_auth = service.hub_auth
