"""The configuration reference, written from the ``Resolve`` traits at build time.

``docs/reference/configuration.md`` holds a marker line; when Sphinx reads that page, the marker
is replaced by one ``confval`` entry per ``config=True`` trait of
:class:`jupyter_resolve.config.Resolve` (name, type, default, help), so the page cannot drift
from the code. ``tests/docs/test_config_reference.py`` renders the same text with
:func:`render_reference`.
"""

from __future__ import annotations

import re
from typing import Any

from traitlets import Container, Dict, Enum, TraitType, Undefined

MARKER = "<!-- resolve-config-reference -->"
PAGE = "reference/configuration"

# The characters that start Markdown or MyST markup inline; CommonMark lets a backslash escape
# any ASCII punctuation, so help text shows as written
_MARKUP = re.compile(r"([\\`*_\[\]<>{}|~&!#$])")


def escape_markdown(text: str) -> str:
    """``text`` as literal Markdown: markup characters escaped, and a leading list marker."""
    escaped = _MARKUP.sub(r"\\\1", text)
    escaped = re.sub(r"^([-+])(?= |$)", r"\\\1", escaped)
    return re.sub(r"^(\d+)([.)])(?= |$)", r"\1\\\2", escaped)


def code_span(text: str) -> str:
    """``text`` as an inline code span, fenced with more backticks than it holds."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def config_traits(cls: type) -> dict[str, TraitType[Any, Any]]:
    """Every ``config=True`` trait of ``cls``, by name, sorted by name."""
    traits: dict[str, TraitType[Any, Any]] = cls.class_traits(config=True)  # type: ignore[attr-defined]
    return dict(sorted(traits.items()))


def type_text(trait: TraitType[Any, Any]) -> str:
    """A trait's type as a person reads it: ``Enum`` with its values, ``List`` with its items."""
    name = type(trait).__name__
    if isinstance(trait, Enum):
        return f"{name} of {', '.join(repr(v) for v in trait.values or ())}"
    if isinstance(trait, Container) and trait._trait is not None:
        name = f"{name} of {type(trait._trait).__name__}"
    if isinstance(trait, Dict) and trait._value_trait is not None:
        name = f"{name} of {type(trait._value_trait).__name__}"
    return f"{name} or None" if trait.allow_none else name


def default_text(cls: type, name: str, trait: TraitType[Any, Any]) -> str:
    """The default as Python writes it, or a note when a method computes it."""
    computed = any(
        getattr(handler, "trait_name", None) == name
        for klass in cls.__mro__
        for handler in vars(klass).values()
        if type(handler).__name__ == "DefaultHandler"
    )
    if computed:
        return "computed (see the description)"
    value = trait.default_value
    if value is Undefined:
        return trait.default_value_repr()
    return repr(value)


def render_entry(cls: type, name: str, trait: TraitType[Any, Any]) -> str:
    """One setting as a MyST ``confval`` block."""
    help_text = " ".join((trait.help or "").split()) or "(no help text)"
    default = default_text(cls, name, trait)
    default_shown = default if default.startswith("computed") else code_span(default)
    return "\n".join(
        [
            f"````{{confval}} c.{cls.__name__}.{name}",
            f":type: {escape_markdown(type_text(trait))}",
            f":default: {default_shown}",
            "",
            escape_markdown(help_text),
            "",
            f"Command line: {code_span(f'--{cls.__name__}.{name}=...')}",
            "````",
            "",
        ]
    )


def render_reference(cls: type | None = None) -> str:
    """The reference of every setting of ``cls`` (by default ``Resolve``) as MyST Markdown."""
    if cls is None:
        from jupyter_resolve.config import Resolve

        cls = Resolve
    traits = config_traits(cls)
    summary = ["| setting | type | default |", "| --- | --- | --- |"]
    for name, trait in traits.items():
        default = default_text(cls, name, trait)
        default_shown = "computed" if default.startswith("computed") else code_span(default)
        if "|" in default_shown:  # a pipe would end the table cell
            default_shown = "see below"
        summary.append(
            f"| {{confval}}`c.{cls.__name__}.{name}` | "
            f"{escape_markdown(type_text(trait))} | {default_shown} |"
        )
    entries = [render_entry(cls, name, trait) for name, trait in traits.items()]
    return "\n".join([*summary, "", "## Every setting", "", *entries])


def _fill_marker(app: Any, docname: str, source: list[str]) -> None:
    if docname == PAGE and MARKER in source[0]:
        source[0] = source[0].replace(MARKER, render_reference())


def _always_reread(
    app: Any, env: Any, added: set[str], changed: set[str], removed: set[str]
) -> list[str]:
    # the page depends on jupyter_resolve/config.py, which Sphinx does not track
    return [PAGE] if PAGE in env.found_docs else []


def setup(app: Any) -> dict[str, Any]:
    app.connect("source-read", _fill_marker)
    app.connect("env-get-outdated", _always_reread)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
