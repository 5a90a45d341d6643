"""``jupyter resolve ...``: the command line."""

from __future__ import annotations

import sys

from jupyter_core.application import JupyterApp

from ._version import __version__
from .config import Resolve


class ResolveCLI(JupyterApp):
    """jupyter-resolve commands. The server side runs as a server extension of `jupyter lab`."""

    name = "jupyter-resolve"
    version = __version__
    description = "jupyter-resolve: a research workbench inside Jupyter."
    classes = [Resolve]  # noqa: RUF012 (traitlets declares it an instance list)
    subcommands: dict[str, tuple[type, str]] = {}  # noqa: RUF012

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
