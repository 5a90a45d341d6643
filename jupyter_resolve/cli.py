"""``jupyter resolve ...``: the command line."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from jupyter_core.application import JupyterApp
from traitlets.config import Application

from ._version import __version__
from .config import Resolve
from .contracts.drift import compute_drift, mcp_drift, soul_drift, without_mcp
from .souls import load_souls


class CheckApp(JupyterApp):
    """Print the four tool lists and every difference between them; exit 1 on drift."""

    name = "jupyter-resolve-check"
    description = "Check that the tool schemas, allow list, bridge and implementations agree."
    classes = [Resolve]  # noqa: RUF012 (traitlets declares it an instance list)

    def initialize(self, argv: Any = None) -> None:
        super().initialize(argv)
        # c.Resolve as the server has it: people keep it in jupyter_server_config.py
        Application.load_config_file(self, "jupyter_server_config", path=self.config_file_paths)
        self.update_config(self.cli_config)  # the command line still wins

    def start(self) -> None:
        from .mcp.catalog import offered_tools
        from .notebook.tools import NOTEBOOK_TOOLS
        from .runs.builtin_tools import GATEWAY_TOOLS
        from .tools.catalog import default_allow, load_schemas, tool_lists

        config = Resolve(parent=self)
        mcp_tools, mcp_problems = offered_tools(config, self.log)
        schemas = load_schemas()
        default = [*default_allow(schemas), *mcp_tools]
        allowed = default if config.allowed_tools is None else config.allowed_tools
        lists = tool_lists(schemas, without_mcp(allowed), [*GATEWAY_TOOLS, *NOTEBOOK_TOOLS])
        for name, tools in {**lists, "mcp": mcp_tools}.items():
            print(f"{name:16} {', '.join(sorted(tools)) or '(none)'}")
        folders = [Path.cwd() / ".resolve" / "souls", *(Path(d) for d in config.souls_dirs)]
        souls = {n: s.declared_tools() for n, s in load_souls(folders).items()}
        print(f"{'souls':16} {', '.join(sorted(souls))}")
        drift = (
            mcp_problems
            + compute_drift(lists)
            + soul_drift({n: without_mcp(t) for n, t in souls.items()}, without_mcp(allowed))
            + mcp_drift(allowed, souls, mcp_tools)
        )
        if drift:
            print(f"\ndrift: {len(drift)} difference(s)")
            for line in drift:
                print(f"  - {line}")
            self.exit(1)
        print("\nno drift: the tool lists agree")


class ReindexApp(JupyterApp):
    """Rebuild the run index (``.resolve/runs.sqlite``) from the run logs."""

    name = "jupyter-resolve-reindex"
    description = "Rebuild the run index from the run logs (run in the server root)."
    classes = [Resolve]  # noqa: RUF012

    def initialize(self, argv: Any = None) -> None:
        super().initialize(argv)
        Application.load_config_file(self, "jupyter_server_config", path=self.config_file_paths)
        self.update_config(self.cli_config)

    def start(self) -> None:
        from .runs.index import FILE
        from .runs.index_upkeep import rebuild

        configured = Resolve(parent=self).state_dir
        state_dir = Path(configured).expanduser() if configured else Path.cwd() / ".resolve"
        runs_dir = state_dir / "runs"
        count = rebuild(state_dir / FILE, runs_dir, self.log)
        print(f"indexed {count} run(s) from {runs_dir} into {state_dir / FILE}")


def state_dir_of(app: JupyterApp) -> Path:
    """The server's state dir as ``c.Resolve.state_dir`` says, else ``.resolve`` here (these
    commands run in the server root)."""
    configured = Resolve(parent=app).state_dir
    return Path(configured).expanduser() if configured else Path.cwd() / ".resolve"


class McpTokenApp(JupyterApp):
    """``jupyter resolve mcp-token create [NAME] | list | revoke ID``: MCP-scoped tokens."""

    name = "jupyter-resolve-mcp-token"
    description = (
        "Make, list or revoke MCP-scoped tokens (accepted on /resolve/mcp only; they cannot "
        "write files, run code in a kernel or decide a proposal): create [NAME] | list | revoke ID"
    )
    classes = [Resolve]  # noqa: RUF012

    def initialize(self, argv: Any = None) -> None:
        super().initialize(argv)
        Application.load_config_file(self, "jupyter_server_config", path=self.config_file_paths)
        self.update_config(self.cli_config)

    def start(self) -> None:
        from .contracts.errors import NotFound
        from .mcp.tokens import TokenStore

        store = TokenStore(state_dir_of(self))
        action, *rest = self.extra_args or ["list"]
        if action == "create" and len(rest) <= 1:
            info, token = store.create(rest[0] if rest else "mcp client")
            print(f"{info.id} ({info.name}): {token}")
            print("Shown this once: give it to the MCP client as 'Authorization: Bearer <token>'.")
        elif action == "list" and not rest:
            for entry in store.tokens():
                made = time.strftime("%Y-%m-%d %H:%M", time.localtime(entry.created))
                print(f"{entry.id}  {made}  {entry.name}")
        elif action == "revoke" and len(rest) == 1:
            try:
                store.revoke(rest[0])
            except NotFound as exc:
                print(exc.message, file=sys.stderr)
                self.exit(1)
            print(f"revoked {rest[0]}")
        else:
            print(f"usage: jupyter resolve mcp-token {self.description.rsplit(': ', 1)[1]}")
            self.exit(2)


class ResolveCLI(JupyterApp):
    """jupyter-resolve commands. The server side runs as a server extension of `jupyter lab`."""

    name = "jupyter-resolve"
    version = __version__
    description = "jupyter-resolve: a research workbench inside Jupyter."
    classes = [Resolve]  # noqa: RUF012
    subcommands = {  # noqa: RUF012
        "check": (CheckApp, CheckApp.description),
        "reindex": (ReindexApp, ReindexApp.description),
        "mcp-token": (McpTokenApp, McpTokenApp.description),
        "artifacts": (
            "jupyter_resolve.artifacts.app.ArtifactsApp",
            "List, show, verify, reindex and export promoted artifacts.",
        ),
    }

    def start(self) -> None:
        if self.subapp is not None:
            self.subapp.start()
            return
        self.print_help()
        self.exit(0)


def main(argv: list[str] | None = None) -> None:
    app = ResolveCLI.instance()
    app.initialize(argv if argv is not None else sys.argv[1:])
    app.start()


if __name__ == "__main__":
    main()
