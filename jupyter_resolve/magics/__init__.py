"""The ``%resolve`` IPython magics (loaded with ``%load_ext jupyter_resolve``).

Files by layer: ``client.py`` (HTTP + SSE to the gateway), ``view_model.py`` (events → what a
view shows, pure), ``widgets.py`` (the live ipywidgets view), ``render.py`` (plain Markdown for
terminals), ``markdown.py`` (sanitized Markdown output and tables), ``line.py`` (the magic
line's options and ``{name}`` interpolation), ``magics.py`` (the magics). httpx and ipywidgets
are imported on first use, so loading the extension stays fast.
"""

from __future__ import annotations

from typing import Any


def load_magics(ipython: Any) -> None:
    """Register the magics on ``ipython``."""
    from .completion import register_completion
    from .magics import ResolveMagics

    magics = ResolveMagics(ipython)
    ipython.register_magics(magics)
    register_completion(ipython, magics.client)  # %resolve --model <TAB>
