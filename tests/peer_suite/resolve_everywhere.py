"""A pytest plugin for jupyter_server's own test suite: every ServerApp its tests make in the
test process loads jupyter_resolve too, whatever extensions the test itself configures.

Loaded with ``-p resolve_everywhere`` by tests/peer_suite/run.py (the ``with`` pass). Servers
the tests start as subprocesses are left as they are.
"""

from __future__ import annotations

from typing import Any

import pytest
from jupyter_server.serverapp import ServerApp

_original = ServerApp.init_server_extensions


def _with_resolve(self: ServerApp) -> None:
    # before the extension manager is made from the list: as if the user's config named it
    self.jpserver_extensions = {**self.jpserver_extensions, "jupyter_resolve": True}
    _original(self)


def pytest_configure(config: Any) -> None:
    ServerApp.init_server_extensions = _with_resolve  # type: ignore[method-assign]


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: Any) -> None:
    ServerApp.init_server_extensions = _original  # type: ignore[method-assign]
