"""Markdown output of the magics: sanitized HTML for notebooks, plain text beside it, and
tables of server text escaped cell by cell."""

from __future__ import annotations

from .safe_html import code_span, escape_markdown, markdown_html


def show_markdown(markdown: str, plain: str | None = None) -> None:
    """Markdown for notebooks, rendered and sanitized here (a notebook renders this output as
    trusted), and plain text for terminals and plain-text conversions."""
    from IPython.display import display

    bundle = {
        "text/html": markdown_html(markdown),
        "text/plain": markdown if plain is None else plain,
    }
    display(bundle, raw=True)  # type: ignore[no-untyped-call]


def _plain_cell(value: str) -> str:
    flat = " ".join(value.split()).replace("|", "\\|")
    return "".join(c for c in flat if c >= " " and c != "\x7f")


def table(rows: list[list[str]], header: list[str], code: int = 0) -> tuple[str, str]:
    """A table as (Markdown, plain text). Cells hold server text (a run's prompt may be a
    peer's): each is escaped, the first ``code`` columns as code spans, the rest as text."""

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(cells) + " |"

    rule = "|" + " --- |" * len(header)
    markdown = [line([escape_markdown(h) for h in header]), rule]
    plain = [line(header), rule]
    for row in rows:
        cells = [code_span(v) if i < code else escape_markdown(v) for i, v in enumerate(row)]
        # a code span ends a table cell at an unescaped "|" all the same
        markdown.append(
            line([c.replace("|", "\\|") if i < code else c for i, c in enumerate(cells)])
        )
        plain.append(line([_plain_cell(v) for v in row]))
    return "\n".join(markdown), "\n".join(plain)
