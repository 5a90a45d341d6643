"""What loads when (issue 21, item 5): importing the extension loads only its settings, and a
server that initializes it loads neither the providers it is not configured with, nor the
artifact store, the A2A peer or the MCP server until a request needs them. Fresh interpreters
report their ``sys.modules``; nothing here is timed (the bench measures the time)."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

from jupyter_resolve.acp import routes as acp_routes
from jupyter_resolve.artifacts import routes as artifacts_routes
from jupyter_resolve.completion import routes as completion_routes
from jupyter_resolve.handlers.lazy import LazyHandler, lazy_routes
from jupyter_resolve.mcp import routes as mcp_routes
from jupyter_resolve.peer import routes as peer_routes

REPO = Path(__file__).resolve().parents[2]

# loaded at start: the handlers of every other route, the gateway and the configured provider
DEFERRED = (
    "jupyter_resolve.artifacts.handlers",
    "jupyter_resolve.artifacts.records",
    "jupyter_resolve.artifacts.service",
    "jupyter_resolve.artifacts.store",
    "jupyter_resolve.acp.handlers",
    "jupyter_resolve.completion.handlers",
    "jupyter_resolve.completion.service",
    "jupyter_resolve.mcp.handlers",
    "jupyter_resolve.mcp.server",
    "jupyter_resolve.mcp.tools",
    "jupyter_resolve.peer.card",
    "jupyter_resolve.peer.handlers",
    "jupyter_resolve.peer.jsonrpc",
    "jupyter_resolve.peer.service",
    "jupyter_resolve.peer.signing",
    "jupyter_resolve.providers.anthropic",
    "jupyter_resolve.providers.scripted",
)

INITIALIZE = """
import json, sys
from jupyter_server.serverapp import ServerApp
app = ServerApp()
app.initialize(argv=sys.argv[1:])
print(json.dumps(sorted(sys.modules)))
"""


def loaded_after(code: str, *args: str, config_dir: Path | None = None) -> set[str]:
    env = dict(os.environ)
    if config_dir is not None:  # not the user's (or the machine's user-level) config
        env["JUPYTER_CONFIG_DIR"] = str(config_dir)
        env["JUPYTER_RUNTIME_DIR"] = str(config_dir / "runtime")
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def test_importing_the_extension_loads_only_its_settings() -> None:
    loaded = loaded_after(
        "import json, sys, jupyter_resolve.extension; print(json.dumps(sorted(sys.modules)))"
    )
    ours = {m for m in loaded if m.startswith("jupyter_resolve")}
    assert "jupyter_resolve.config" in ours
    heavy = {"jupyter_resolve.gateway", "pydantic", "httpx", *DEFERRED}
    assert sorted(heavy & loaded) == []
    assert sorted(m for m in ours if m.startswith("jupyter_resolve.handlers")) == []


def test_an_initialized_server_defers_what_it_does_not_use(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    loaded = loaded_after(
        INITIALIZE,
        "--ServerApp.jpserver_extensions={'jupyter_resolve': True}",
        f"--ServerApp.root_dir={root}",
        "--ServerApp.port=0",
        "--Resolve.provider=openai",
        "--Resolve.base_url=http://127.0.0.1:9/v1",
        config_dir=tmp_path / "config",
    )
    # the extension did load: its gateway, the routes it serves at once, the provider
    assert {
        "jupyter_resolve.gateway",
        "jupyter_resolve.runs.handlers",
        "jupyter_resolve.providers.openai",
    } <= loaded
    assert sorted(m for m in loaded if m.startswith(DEFERRED)) == []


TABLES = [artifacts_routes, peer_routes, completion_routes, acp_routes, mcp_routes]


def test_every_lazy_route_names_a_handler_of_its_module() -> None:
    for table in TABLES:
        module = importlib.import_module(table.HANDLERS)
        assert not hasattr(module, "routes"), f"{table.HANDLERS}: its routes are in routes.py"
    for _, stand_in in lazy_routes(TABLES):
        assert issubclass(stand_in, LazyHandler)
        real = stand_in.target()
        assert real.__module__ == stand_in.target_module
        assert real.__name__ == stand_in.__name__
