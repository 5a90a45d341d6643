"""jupyter-resolve: a research workbench inside Jupyter."""

from __future__ import annotations

from typing import Any

from ._version import __version__

__all__ = ["__version__"]


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext jupyter_resolve``: register the ``%resolve`` magics."""
    from .magics import load_magics

    load_magics(ipython)


def _jupyter_server_extension_points() -> list[dict[str, Any]]:
    from .extension import ResolveExtension

    return [{"module": "jupyter_resolve", "app": ResolveExtension}]
