"""The configuration reference lists every ``c.Resolve`` setting with its help (issue 32.5).

The page is written at build time by ``docs/_ext/resolve_config.py``; these tests render it with
the same function, so a setting the reference leaves out, or a help text it changes, fails here
without a Sphinx build. One test builds the page with Sphinx, once, in a temporary folder.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from traitlets import Bool, Unicode
from traitlets.config import Configurable

from jupyter_resolve.config import Resolve

DOCS = Path(__file__).resolve().parents[2] / "docs"


def load_extension() -> ModuleType:
    spec = importlib.util.spec_from_file_location("resolve_config", DOCS / "_ext/resolve_config.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ext = load_extension()
SETTINGS = sorted(Resolve.class_traits(config=True))


def unescape(markdown: str) -> str:
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", markdown)


def entry(text: str, name: str, cls: str = "Resolve") -> str:
    """The ``confval`` block of one setting in the rendered reference."""
    match = re.search(
        rf"^````\{{confval\}} c\.{cls}\.{re.escape(name)}\n(.*?)^````$", text, re.M | re.S
    )
    assert match, f"c.{cls}.{name} has no entry in the configuration reference"
    return match.group(1)


def help_of(trait: Any) -> str:
    return " ".join(trait.help.split())


@pytest.mark.parametrize("name", SETTINGS)
def test_every_setting_has_an_entry_with_its_help(name: str) -> None:
    trait = Resolve.class_traits(config=True)[name]
    assert trait.help.strip(), f"c.Resolve.{name} has no help text to document"
    block = entry(ext.render_reference(), name)
    assert help_of(trait) in unescape(block)
    assert ":type: " in block and ":default: " in block


def test_every_setting_is_in_the_summary_table() -> None:
    text = ext.render_reference()
    rows = re.findall(r"^\| \{confval\}`c\.Resolve\.([a-z0-9_]+)` \|", text, re.M)
    assert rows == SETTINGS


def test_a_new_setting_appears_and_a_missing_one_is_noticed() -> None:
    class Grown(Configurable):
        kept = Bool(True, config=True, help="A setting with *stars*, `ticks` and {braces}.")
        added = Unicode("x|y", config=True, help="Added later.")
        internal = Unicode("", help="Not a setting: config is not set.")

    text = ext.render_reference(Grown)
    assert "A setting with *stars*, `ticks` and {braces}." in unescape(entry(text, "kept", "Grown"))
    assert "Added later." in unescape(entry(text, "added", "Grown"))
    assert "internal" not in text
    with pytest.raises(AssertionError, match="no entry"):
        entry(ext.render_reference(Resolve), "added")


def test_defaults_are_written_as_python() -> None:
    text = ext.render_reference()
    assert ":default: `'scripted'`" in entry(text, "provider")
    assert ":default: `8`" in entry(text, "max_rounds")
    assert ":default: `None`" in entry(text, "allowed_tools")
    # runtime_path's default is computed by a method, not a value to copy
    assert ":default: computed" in entry(text, "runtime_path")


def test_the_page_and_the_build_use_the_generator() -> None:
    page = (DOCS / "reference/configuration.md").read_text()
    assert page.count(ext.MARKER) == 1
    conf = (DOCS / "conf.py").read_text()
    assert '"resolve_config"' in conf


def test_sphinx_builds_the_reference(tmp_path: Path) -> None:
    """The generated Markdown is valid for Sphinx and MyST: one entry per setting in HTML."""
    pytest.importorskip("sphinx")  # the docs extra, which `make setup` installs
    source = tmp_path / "src"
    (source / "reference").mkdir(parents=True)
    shutil.copy(DOCS / "reference/configuration.md", source / "reference/configuration.md")
    (source / "index.md").write_text("# Docs\n\n```{toctree}\nreference/configuration\n```\n")
    (source / "conf.py").write_text(
        f"import sys\nsys.path.insert(0, {str(DOCS / '_ext')!r})\n"
        'extensions = ["myst_parser", "resolve_config"]\nnitpicky = True\n'
        # the page links to other pages of the site, which this build leaves out
        'suppress_warnings = ["myst.xref_missing"]\n'
    )
    out = tmp_path / "html"
    # a process of its own: Sphinx's and MyST's deprecation notices are not this test's warnings
    built = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "-q", "-b", "html", str(source), str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert built.returncode == 0, built.stderr
    html = (out / "reference/configuration.html").read_text()
    for name in SETTINGS:
        assert f'id="confval-c.Resolve.{name}"' in html, name
