"""Contracts guarded as tests: auth on every public handler (authentication, and the server's
Authorizer through ``auth_resource`` and ``@authorized``, DESIGN 9.4), the public surface, the
event names shared with DESIGN.md."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from jupyter_server.auth import decorator as jupyter_auth_decorator
from tornado import web

import jupyter_resolve
from jupyter_resolve.contracts.bodies import EVENT_TYPES
from jupyter_resolve.handlers.lazy import LazyHandler
from jupyter_resolve.peer import handlers as peer
from jupyter_resolve.routes import public_routes as served_routes
from tests.conftest import Server

METHODS = ("get", "post", "put", "patch", "delete")


def concrete(pattern: str) -> str:
    """A URL matching a route pattern, with every group filled with a plausible value."""
    path = re.sub(r"\(\?P<(\w+)>[^)]*\)", lambda m: f"x-{m.group(1)}", pattern)
    return path.replace("\\", "")


def our_methods(handler: type) -> list[str]:
    """The HTTP methods ``handler`` or one of our base classes defines."""
    return [
        method
        for method in METHODS
        if any(
            method in vars(cls)
            for cls in handler.__mro__[:-1]
            if cls.__module__.startswith("jupyter_resolve")
        )
    ]


def checked_routes() -> list[tuple[str, type]]:
    """Every public route but the signed peer's, with its real handler class."""
    found = []
    for pattern, handler in served_routes():
        real = handler.target() if issubclass(handler, LazyHandler) else handler
        if real.__module__ not in NOT_AUTHORIZER:
            found.append((pattern, real))
    return found


def public_routes() -> list[tuple[str, str]]:
    found = []
    for pattern, handler in checked_routes():
        for method in our_methods(handler):
            found.append((method.upper(), concrete(pattern)))
    return found


def served_handlers(rules: Any) -> Iterator[tuple[str, type]]:
    """(pattern, handler class) of every jupyter_resolve handler a tornado router serves."""
    for rule in getattr(rules, "rules", rules):
        target = rule.target
        if isinstance(target, type) and issubclass(target, LazyHandler):
            yield rule.matcher.regex.pattern, target.target()  # what serves its requests
        elif isinstance(target, type) and target.__module__.startswith("jupyter_resolve."):
            yield rule.matcher.regex.pattern, target
        elif hasattr(target, "rules"):
            yield from served_handlers(target)


def wrappers(function: Callable[..., Any]) -> Iterator[Callable[..., Any]]:
    """``function`` and every function it wraps (``functools.wraps`` chains)."""
    current: Any = function
    while current is not None:
        yield current
        current = getattr(current, "__wrapped__", None)


def is_code_of(function: Callable[..., Any], module: Any) -> bool:
    return function.__code__.co_filename == module.__file__


# Not under the Jupyter Authorizer, on purpose: the peer endpoint is signed per peer (DESIGN 3.8)
# and has its own tests; the internal endpoints live on their own loopback listener.
NOT_AUTHORIZER = {peer.__name__}


def test_every_public_route_is_listed() -> None:
    routes = public_routes()
    assert ("POST", "/resolve/api/chat") in routes
    assert len(routes) >= 12


@pytest.mark.parametrize(("method", "path"), public_routes())
async def test_every_public_handler_needs_auth(server: Server, method: str, path: str) -> None:
    async with server.client() as client:
        response = await client.request(method, path, content=b"{}" if method != "GET" else None)
    assert response.status_code == 403, (method, path, response.status_code)


def test_every_public_handler_declares_resolve_and_uses_authorized() -> None:
    """A handler without ``auth_resource = "resolve"`` or a method without ``@authorized``
    (under ``@web.authenticated``) would let a request past the server's Authorizer."""
    problems = []
    for _pattern, handler in checked_routes():
        if getattr(handler, "auth_resource", None) != "resolve":
            problems.append(f"{handler.__name__}: auth_resource is not 'resolve'")
        for method in our_methods(handler):
            chain = list(wrappers(getattr(handler, method)))
            outer = chain[0]
            if not is_code_of(outer, web) or outer.__code__.co_name != "wrapper":
                problems.append(f"{handler.__name__}.{method}: @web.authenticated not outermost")
            if not any(is_code_of(f, jupyter_auth_decorator) for f in chain):
                problems.append(f"{handler.__name__}.{method}: no @authorized")
    assert problems == []


async def test_every_served_handler_is_in_the_checked_modules(jp_serverapp: Any) -> None:
    """Whatever the extension serves is checked above: a handler module added to the extension
    without being added to the checks fails here."""
    checked = {handler for _pattern, handler in checked_routes()}
    served = list(served_handlers(jp_serverapp.web_app.default_router))
    unchecked = sorted(
        f"{pattern} -> {handler.__module__}.{handler.__name__}"
        for pattern, handler in served
        if handler not in checked and handler.__module__ not in NOT_AUTHORIZER
    )
    assert unchecked == []
    assert len({h for _, h in served} & checked) == len(checked)


def test_public_python_surface_is_pinned() -> None:
    assert jupyter_resolve.__all__ == ["__version__"]
    assert callable(jupyter_resolve._jupyter_server_extension_points)
    assert callable(jupyter_resolve.load_ipython_extension)


def test_event_names_match_the_design() -> None:
    design = (
        "run.started text.delta reasoning.delta tool.writing tool.requested tool.approval "
        "tool.started tool.output tool.completed usage run.error run.completed "
        "context.compacted notebook.proposal notebook.decision run.message"
    ).split()
    assert list(EVENT_TYPES) == design
