"""What %resolve hands a notebook (which renders it trusted): sanitized or escaped, never live
(issue 14, items 1 and 12)."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from jupyter_resolve.magics.markdown import table as _table
from jupyter_resolve.magics.safe_html import (
    clean_html,
    code_span,
    escape_markdown,
    html_frame,
    image_is_inline,
    markdown_block,
    markdown_html,
    tool_bundle,
)

PAYLOADS = [
    '<img src=x onerror="window.__resolve_pwned=1">',
    "<script>window.__resolve_pwned=1</script>",
    '<svg onload="window.__resolve_pwned=1"><circle r="1"/></svg>',
    '<a href="javascript:window.__resolve_pwned=1">x</a>',
    "[x](javascript:window.__resolve_pwned=1)",
    "[x](JaVaScRiPt&#58;window.__resolve_pwned=1)",
    '<a href="java\tscript:window.__resolve_pwned=1">x</a>',
    '<iframe src="javascript:window.__resolve_pwned=1"></iframe>',
    '<object data="data:text/html,<script>window.__resolve_pwned=1</script>"></object>',
    '<a href="data:text/html,<script>window.__resolve_pwned=1</script>">x</a>',
    '<div style="background:url(javascript:x)">x</div>',
    '<math><mtext><table><mglyph><style><img src=x onerror="window.__resolve_pwned=1">',
    "<<script>script>window.__resolve_pwned=1<</script>/script>",
    '<form action="javascript:x"><button>go</button></form>',
    '<details open ontoggle="window.__resolve_pwned=1">',
    "<base href='//evil.test/'>",
    '<meta http-equiv="refresh" content="0;url=javascript:x">',
    '```\n</code></pre><img src=x onerror="window.__resolve_pwned=1">\n```',
]

LIVE_TAGS = {"script", "iframe", "object", "embed", "svg", "math", "style", "base", "meta"}
LIVE_TAGS |= {"form", "link", "frame", "input"}


class _Markup(HTMLParser):
    """The elements and attributes a browser would build from some HTML."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, {k: v or "" for k, v in attrs}))


def elements(html: str) -> list[tuple[str, dict[str, str]]]:
    parser = _Markup()
    parser.feed(html)
    parser.close()
    return parser.elements


def assert_inert_html(html: str) -> None:
    """No element or attribute that runs script, loads a page, or fetches from elsewhere."""
    for tag, attrs in elements(html):
        if tag == "iframe":  # our sandboxed frame for tool HTML, and only that
            assert attrs.get("sandbox") == "" and "src" not in attrs, attrs
            continue
        if tag == "input":
            assert attrs.get("type") == "checkbox", attrs
            continue
        assert tag not in LIVE_TAGS, (tag, attrs)
        for name, value in attrs.items():
            assert not name.startswith("on") and name not in ("style", "srcset"), (tag, name)
            url = re.sub(r"[\x00-\x20]", "", value).lower()
            if name in ("href", "src", "action", "formaction", "data", "poster"):
                assert not url.startswith(("javascript:", "vbscript:")), (tag, name, value)
                if name == "src":
                    assert tag == "img" and image_is_inline(value), (tag, value)
                elif url.startswith("data:"):
                    raise AssertionError((tag, name, value))


@pytest.mark.parametrize("payload", PAYLOADS)
def test_markdown_and_html_payloads_are_sanitized(payload: str) -> None:
    assert_inert_html(markdown_html(f"Answer: {payload} end"))
    assert_inert_html(clean_html(payload))
    assert_inert_html(markdown_html(payload, allow_remote_images=True))


def test_markdown_still_reads_as_markdown() -> None:
    out = markdown_html(
        "# Title\n\n**bold** `a < b`\n\n| a | b |\n| - | - |\n| 1 | 2 |\n\n- [x] done"
    )
    assert "<h1>Title</h1>" in out and "<strong>bold</strong>" in out
    assert "<code>a &lt; b</code>" in out and "<td>1</td>" in out
    assert '<input type="checkbox" disabled checked>' in out or "checkbox" in out
    link = markdown_html("[docs](https://jupyter.org) <https://example.org>")
    assert '<a href="https://jupyter.org" rel="noopener noreferrer">docs</a>' in link


def test_remote_images_become_links_unless_allowed() -> None:
    remote = markdown_html('![chart](https://evil.test/c.png?secret=1) <img src="//evil.test/x">')
    assert "<img" not in remote
    assert 'href="https://evil.test/c.png?secret=1"' in remote and "chart" in remote
    assert 'href="//evil.test/x"' in remote
    # inline data and same-origin (relative) images load as images
    kept = markdown_html("![a](data:image/png;base64,iVBORw0KGgo=) ![b](files/plot.png)")
    assert kept.count("<img") == 2
    allowed = markdown_html("![chart](https://evil.test/c.png)", allow_remote_images=True)
    assert '<img src="https://evil.test/c.png" alt="chart">' in allowed
    # a data: image that is not an image type is dropped, not loaded
    assert "data:text" not in markdown_html("![x](data:text/html;base64,PHNjcmlwdD4=)")


@pytest.mark.parametrize(
    ("src", "inline"),
    [
        ("data:image/png;base64,AAAA", True),
        ("blob:http://127.0.0.1/abc", True),
        ("files/a.png", True),
        ("/user/x/files/a.png", True),
        ("https://evil.test/a.png", False),
        ("//evil.test/a.png", False),
        ("\\\\evil.test/a.png", False),
        ("/\\evil.test/a.png", False),
        (" \thttps://evil.test/a.png", False),
        ("ht\ttps://evil.test/a.png", False),
        ("ftp://evil.test/a.png", False),
    ],
)
def test_image_is_inline(src: str, inline: bool) -> None:
    assert image_is_inline(src) is inline


def test_tool_html_goes_into_a_sandboxed_frame() -> None:
    bundle = tool_bundle({"text/html": "<script>x()</script><img src='https://e.test/x'>"})
    frame = bundle["text/html"]
    (tag, attrs), *_ = elements(frame)
    assert tag == "iframe" and attrs["sandbox"] == "" and "src" not in attrs
    # the frame's own policy loads nothing from elsewhere
    assert "default-src 'none'" in attrs["srcdoc"] and "img-src data: blob:;" in attrs["srcdoc"]
    assert "<script>x()</script>" in attrs["srcdoc"]  # inert in the sandbox
    assert "https:" in html_frame("<p>x</p>", allow_remote_images=True)


def test_tool_bundles_show_only_inert_types() -> None:
    svg = tool_bundle({"image/svg+xml": '<svg onload="x()"/>', "text/plain": "<SVG>"})
    assert list(svg) == ["text/html"]
    assert svg["text/html"].startswith('<img src="data:image/svg+xml;base64,')
    assert tool_bundle({"image/png": "iVBORw0KGgo=\n"}) == {"image/png": "iVBORw0KGgo="}
    md = tool_bundle({"text/markdown": PAYLOADS[0]})
    assert_inert_html(md["text/html"])
    js = tool_bundle({"application/javascript": "x()", "text/plain": "t"})
    assert list(js) == ["text/plain"] and "x()" not in js["text/plain"]
    assert tool_bundle({"text/plain": "only text"}) == {}
    # not base64: not handed to the image renderer
    assert "image/png" not in tool_bundle({"image/png": '"><script>'})


def test_markdown_block_is_one_html_block() -> None:
    safe = markdown_html("```\na\n\n<b>\n```\n\ntext")
    block = markdown_block(safe)
    assert block.startswith("<div>") and block.endswith("</div>\n")
    assert "\n" not in block[:-1]  # no blank line ends the HTML block early
    # the same HTML, read by a browser: newlines come back from &#10;
    assert "a\n\n&lt;b&gt;" in block.replace("&#10;", "\n")


def test_table_cells_are_escaped() -> None:
    prompt = '<img src=x onerror="window.__resolve_pwned=1"> | **x** [l](javascript:y)'
    markdown, plain = _table(
        [["run-1", "s", "12:00", "stop", prompt]], ["run", "s", "t", "st", "asked"], code=1
    )
    out = markdown_html(markdown)
    assert_inert_html(out)
    assert "<strong>" not in out and "<a " not in out
    # shown as written: the prompt's text is all there, in one cell
    assert "&lt;img src=x onerror=" in out and out.count("<td>") == 5
    assert "| run-1 | s | 12:00 | stop | <img src=x" in plain


def test_escapes_show_text_literally() -> None:
    assert (
        markdown_html(escape_markdown("*a* <b> `c` [d](e)")) == "<p>*a* &lt;b&gt; `c` [d](e)</p>\n"
    )
    assert markdown_html(code_span("a ` <b>")) == "<p><code>a ` &lt;b&gt;</code></p>\n"
    assert escape_markdown("a\nb\x1b[31m") == "a b\\[31m"
