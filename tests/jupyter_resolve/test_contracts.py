"""Contracts guarded as tests: auth on every public handler, the public surface, the event
names shared with DESIGN.md."""

from __future__ import annotations

import re

import pytest

import jupyter_resolve
from jupyter_resolve.handlers import api, artifacts, facade
from jupyter_resolve.models import EVENT_TYPES
from tests.conftest import Server

METHODS = ("get", "post", "put", "patch", "delete")


def concrete(pattern: str) -> str:
    """A URL matching a route pattern, with every group filled with a plausible value."""
    path = re.sub(r"\(\?P<(\w+)>[^)]*\)", lambda m: f"x-{m.group(1)}", pattern)
    return path.replace("\\", "")


def public_routes() -> list[tuple[str, str]]:
    found = []
    for module in (api, facade, artifacts):
        for route in module.routes:
            pattern, handler = route[0], route[1]
            for method in METHODS:
                if method in vars(handler) or any(
                    method in vars(base)
                    for base in handler.__mro__[1:-1]
                    if base.__module__.startswith("jupyter_resolve")
                ):
                    found.append((method.upper(), concrete(pattern)))
    return found


def test_every_public_route_is_listed() -> None:
    routes = public_routes()
    assert ("POST", "/resolve/api/chat") in routes
    assert len(routes) >= 12


@pytest.mark.parametrize(("method", "path"), public_routes())
async def test_every_public_handler_needs_auth(server: Server, method: str, path: str) -> None:
    async with server.client() as client:
        response = await client.request(method, path, content=b"{}" if method != "GET" else None)
    assert response.status_code == 403, (method, path, response.status_code)


def test_public_python_surface_is_pinned() -> None:
    assert jupyter_resolve.__all__ == ["__version__"]
    assert callable(jupyter_resolve._jupyter_server_extension_points)
    assert callable(jupyter_resolve.load_ipython_extension)


def test_event_names_match_the_design() -> None:
    design = (
        "run.started text.delta reasoning.delta tool.requested tool.approval tool.started "
        "tool.completed usage run.error run.completed"
    ).split()
    assert list(EVENT_TYPES) == design
