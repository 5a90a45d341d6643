"""What ``%resolve`` may hand a notebook frontend (pure: no I/O).

ipywidgets' Output widget renders every MIME type as trusted, and JupyterLab skips its sanitizer
for trusted output; the final display of a run is trusted too once its notebook is. So nothing
that came from a model, a tool, a peer or a run log leaves here unsanitized:

- Markdown is rendered to HTML here (mistune) and sanitized with nh3 (the Rust sanitizer
  ammonia): no script, no event handler, no ``javascript:`` URL, no ``style``.
- Images whose source is not ``data:``, ``blob:`` or relative (same origin) become links, unless
  the server allows remote images (``c.Resolve.allow_remote_images``): an image fetched from
  anywhere can carry data out of the page.
- A tool's HTML goes into a sandboxed iframe (no scripts, an opaque origin, a CSP that loads
  nothing remote); its SVG into an ``<img>``, where an SVG runs no script; other rich types
  are shown as text.
"""

from __future__ import annotations

import base64
import binascii
import html
import json
import re
from html.parser import HTMLParser
from typing import Any

import mistune
import nh3
from mistune.renderers.html import HTMLRenderer

# nh3's defaults plus checkbox inputs (Markdown task lists) and titles on links and images
_TAGS = set(nh3.ALLOWED_TAGS) | {"input"}
_ATTRIBUTES: dict[str, set[str]] = {k: set(v) for k, v in nh3.ALLOWED_ATTRIBUTES.items()}
_ATTRIBUTES["a"] = _ATTRIBUTES.get("a", set()) | {"title"}
_ATTRIBUTES["img"] = _ATTRIBUTES.get("img", set()) | {"title"}
_ATTRIBUTES["input"] = {"checked", "disabled"}
_TAG_VALUES = {"input": {"type": {"checkbox"}}}
_SCHEMES = {"http", "https", "mailto", "data", "blob"}
_URL_ATTRIBUTES = {"href", "src", "cite"}
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*):")
_C0_OR_SPACE = "".join(chr(c) for c in range(0x21))
_INLINE_IMAGE = re.compile(r"^data:image/[A-Za-z0-9.+\-]+[;,]", re.IGNORECASE)
# what a browser ignores in a URL: tab, line feed, carriage return anywhere
_URL_IGNORED = str.maketrans("", "", "\t\n\r")


def _url(value: str) -> str:
    """A URL as a browser reads it (control characters and spaces at the ends dropped)."""
    return value.translate(_URL_IGNORED).strip(_C0_OR_SPACE)


def image_is_inline(src: str) -> bool:
    """True for an image source that loads nothing from another origin: ``data:``, ``blob:``
    or a relative URL (which resolves to the page's own origin)."""
    url = _url(src)
    scheme = _SCHEME.match(url)
    if scheme:
        return scheme.group(1).lower() in ("data", "blob")
    # "//host/x" is protocol-relative; browsers read a backslash as a slash there too
    return not url[:2].replace("\\", "/").startswith("//")


def _attribute_filter(tag: str, attribute: str, value: str) -> str | None:
    if attribute not in _URL_ATTRIBUTES:
        return value
    url = _url(value)
    scheme = _SCHEME.match(url)
    name = scheme.group(1).lower() if scheme else ""
    if name in ("data", "blob"):
        # inline data only as an image; a data: link could open a page in a new origin
        if tag != "img" or attribute != "src":
            return None
        return value if name == "blob" or _INLINE_IMAGE.match(url) else None
    return value


_CLEANER = nh3.Cleaner(
    tags=_TAGS,
    attributes=_ATTRIBUTES,
    tag_attribute_values=_TAG_VALUES,
    url_schemes=_SCHEMES,
    attribute_filter=_attribute_filter,
)


class _ImagesAsLinks(HTMLParser):
    """Re-serializes sanitized HTML with every remote ``<img>`` replaced by a link to it."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []

    def _image(self, attrs: list[tuple[str, str | None]]) -> bool:
        values = {name: value or "" for name, value in attrs}
        src = values.get("src", "")
        if not src or image_is_inline(src):
            return False
        label = values.get("alt") or values.get("title") or src
        self.out.append(
            f'<a href="{html.escape(src)}" title="{html.escape(REMOTE_IMAGE_NOTE)}">'
            f"{html.escape(label, quote=False)} (remote image)</a>"
        )
        return True

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "img" and self._image(attrs):
            return
        self.out.append(self.get_starttag_text() or "")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        self.out.append(f"</{tag}>")

    def handle_data(self, data: str) -> None:
        self.out.append(html.escape(data, quote=False))


REMOTE_IMAGE_NOTE = "a remote image, not loaded (c.Resolve.allow_remote_images is off)"


def clean_html(fragment: str, *, allow_remote_images: bool = False) -> str:
    """Sanitized HTML: safe in a trusted renderer."""
    cleaned = _CLEANER.clean(fragment)
    if allow_remote_images or "<img" not in cleaned:
        return cleaned
    rewriter = _ImagesAsLinks()
    rewriter.feed(cleaned)
    rewriter.close()
    # the rewrite's own output is sanitized once more, so no bug in it can let anything through
    return _CLEANER.clean("".join(rewriter.out))


_MARKDOWN = mistune.create_markdown(
    # raw HTML and every URL pass the Markdown step; nh3 is the one judge of both
    renderer=HTMLRenderer(escape=False, allow_harmful_protocols=True),
    plugins=["table", "strikethrough", "math", "task_lists", "url"],
)


def markdown_html(text: str, *, allow_remote_images: bool = False) -> str:
    """Markdown (from a model, a tool, a peer, a run log) as sanitized HTML."""
    rendered = _MARKDOWN(text)
    assert isinstance(rendered, str)
    return clean_html(rendered, allow_remote_images=allow_remote_images)


def markdown_block(safe_html: str) -> str:
    """Sanitized HTML as a Markdown document that renders to exactly that HTML.

    A CommonMark HTML block runs from a line opening with ``<div>`` to the next blank line;
    with every newline written as ``&#10;`` there is none, so no Markdown parser reads any of
    it as Markdown (which could make links or raw HTML of its text again)."""
    return "<div>" + safe_html.replace("\r", "&#13;").replace("\n", "&#10;") + "</div>\n"


def escape_markdown(value: str) -> str:
    """Any text as Markdown that shows it literally, on one line: every ASCII punctuation mark
    backslash-escaped (so no HTML, link, image or emphasis), control characters dropped."""
    flat = " ".join(value.split())
    flat = "".join(c for c in flat if c >= " " and c != "\x7f")
    return re.sub(r"([!-/:-@\[-`{-~])", r"\\\1", flat)


def code_span(value: str) -> str:
    """Any text as a Markdown code span (shown literally, whatever it holds)."""
    flat = " ".join(value.split())
    flat = "".join(c for c in flat if c >= " " and c != "\x7f")
    ticks = "`"
    while ticks in flat:
        ticks += "`"
    return f"{ticks} {flat} {ticks}" if flat else ""


def _pre(text: str) -> str:
    return f'<pre style="white-space: pre-wrap">{html.escape(text)}</pre>'


def _base64(data: Any) -> str | None:
    """Base64 image data as Jupyter carries it (a string, maybe a list of lines), checked."""
    text = "".join(data) if isinstance(data, list) else data
    if not isinstance(text, str):
        return None
    compact = "".join(text.split())
    try:
        base64.b64decode(compact, validate=True)
    except (binascii.Error, ValueError):
        return None
    return compact


def svg_img(svg: Any) -> str:
    """An SVG as an ``<img>``: shown as a picture, its scripts never run."""
    text = "".join(svg) if isinstance(svg, list) else str(svg)
    data = base64.b64encode(text.encode("utf-8")).decode("ascii")
    return f'<img src="data:image/svg+xml;base64,{data}" alt="SVG output">'


_FRAME_CSP = (
    "default-src 'none'; img-src data: blob:{remote}; media-src data: blob:; "
    "style-src 'unsafe-inline'; font-src data:"
)


def html_frame(document: Any, *, allow_remote_images: bool = False) -> str:
    """A tool's HTML in a sandboxed iframe: no scripts, an opaque origin, nothing fetched
    from elsewhere (remote images only when allowed)."""
    text = "".join(document) if isinstance(document, list) else str(document)
    csp = _FRAME_CSP.format(remote=" https: http:" if allow_remote_images else "")
    srcdoc = (
        f'<!DOCTYPE html><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
        f'<meta http-equiv="x-dns-prefetch-control" content="off">{text}'
    )
    # no script may measure the frame, so its height is estimated from the markup
    lines = text.count("\n") + 3 * len(re.findall(r"<(?:tr|br|p|li|div|h\d)\b", text, re.I))
    height = max(60, min(480, 24 + 20 * lines))
    return (
        f'<iframe sandbox="" referrerpolicy="no-referrer" title="HTML output (sandboxed)" '
        f'style="width: 100%; height: {height}px; border: 1px solid #ddd; resize: vertical" '
        f'srcdoc="{html.escape(srcdoc, quote=True)}"></iframe>'
    )


RASTER_TYPES = ("image/png", "image/jpeg", "image/gif")


def tool_bundle(mime: dict[str, Any], *, allow_remote_images: bool = False) -> dict[str, Any]:
    """A tool's rich output as a display bundle that is safe to render trusted.

    One representation is shown, pictures first (they render exactly; HTML loses its scripts
    in the sandbox): PNG, JPEG or GIF as is, SVG as an image, HTML in a sandboxed frame,
    Markdown sanitized, LaTeX and JSON as text. Anything else is named, not rendered."""
    for kind in RASTER_TYPES:
        if kind in mime:
            data = _base64(mime[kind])
            if data is not None:
                return {kind: data}
    shown: str | None = None
    if "image/svg+xml" in mime:
        shown = svg_img(mime["image/svg+xml"])
    elif "text/html" in mime:
        shown = html_frame(mime["text/html"], allow_remote_images=allow_remote_images)
    elif "text/markdown" in mime:
        text = mime["text/markdown"]
        text = "".join(text) if isinstance(text, list) else str(text)
        shown = markdown_html(text, allow_remote_images=allow_remote_images)
    elif "text/latex" in mime:
        shown = _pre(str(mime["text/latex"]))
    elif "application/json" in mime:
        shown = _pre(json.dumps(mime["application/json"], indent=2, ensure_ascii=False))
    if shown is not None:
        return {"text/html": shown}
    other = sorted(k for k in mime if k != "text/plain")
    if not other:
        return {}
    note = f"({', '.join(other)} output not shown here; it is in _resolve.tool_calls)"
    return {"text/plain": note}
