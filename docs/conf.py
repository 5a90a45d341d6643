"""Sphinx configuration of the jupyter-resolve documentation (``make docs``).

MyST Markdown pages, the PyData theme, and one local extension (``_ext/resolve_config.py``)
that writes the configuration reference from the ``Resolve`` traits. The build reaches no
network: no intersphinx, no analytics, no remote fonts or version switcher.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE / "_ext"))
sys.path.insert(0, str(HERE.parent))  # jupyter_resolve, when the docs build from a clone

from jupyter_resolve._version import __version__  # noqa: E402

project = "jupyter-resolve"
author = "the jupyter-resolve developers"
copyright = "the jupyter-resolve developers"
version = release = __version__

extensions = ["myst_parser", "resolve_config"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_ext"]

myst_enable_extensions = ["colon_fence", "deflist", "fieldlist"]
myst_heading_anchors = 3
# Every {confval} reference must name a setting that exists: a renamed or removed setting
# fails the build instead of leaving a dead name in the text.
nitpicky = True

html_theme = "pydata_sphinx_theme"
html_title = "jupyter-resolve"
html_static_path = ["_static"]
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "primary_sidebar_end": [],
    "footer_start": ["copyright"],
    "footer_end": [],
    "analytics": {},
}
html_show_sourcelink = False
html_copy_source = False
