"""What differs between an artifact's bytes and a reproduction's (pure): a text diff for text,
the first differing rows for tables (CSV, an HTML table such as a DataFrame's), images compared
after normalising their metadata (a PNG's pixels, not its text chunks or compression; an SVG
without its ``<metadata>``), and a static look for what makes code nondeterministic."""

from __future__ import annotations

import csv
import difflib
import hashlib
import io
import re
import struct
import zlib
from html.parser import HTMLParser
from typing import Any

from .media import is_textual

MAX_DIFF_LINES = 200
MAX_ROWS = 5
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

# Code that gives another result each time unless it seeds or fixes it.
NONDETERMINISM = {
    "random numbers (random, numpy.random) without a seed set in the code": re.compile(
        r"\b(random\.|np\.random\.|numpy\.random\.|default_rng\(\))"
    ),
    "the clock (time, datetime.now, today)": re.compile(
        r"\b(time\.time|time\.perf_counter|datetime\.now|datetime\.utcnow|date\.today)\b"
    ),
    "random ids (uuid)": re.compile(r"\buuid\.uuid[14]\b"),
    "set or dict order of str hashes (PYTHONHASHSEED)": re.compile(r"\bhash\("),
}
SEEDED = re.compile(r"\b(seed\(|default_rng\(\s*\d|RandomState\(\s*\d|manual_seed\()")


def png_pixels(data: bytes) -> bytes | None:
    """A PNG's header and decompressed image data (what it shows), or None if not a PNG."""
    if not data.startswith(PNG_SIGNATURE):
        return None
    pos, header, idat = len(PNG_SIGNATURE), b"", b""
    while pos + 8 <= len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    try:
        return header + zlib.decompress(idat)
    except zlib.error:
        return None


def normalized(data: bytes, media_type: str) -> bytes:
    """The bytes with what does not change the picture taken out (images only)."""
    if media_type == "image/png":
        pixels = png_pixels(data)
        return pixels if pixels is not None else data
    if media_type == "image/svg+xml":
        return re.sub(rb"<metadata>.*?</metadata>", b"", data, flags=re.S)
    return data


class _Rows(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self.rows:
            self.rows[-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def table_rows(text: str, media_type: str) -> list[list[str]] | None:
    """The rows of a CSV, or of an HTML document's table; None when it holds none."""
    if media_type == "text/csv":
        return [list(r) for r in csv.reader(io.StringIO(text))]
    if media_type == "text/html" and "<table" in text.lower():
        parser = _Rows()
        parser.feed(text)
        return parser.rows or None
    return None


def first_differing_rows(expected: list[list[str]], got: list[list[str]]) -> list[dict[str, Any]]:
    rows = []
    for index in range(max(len(expected), len(got))):
        want = expected[index] if index < len(expected) else None
        have = got[index] if index < len(got) else None
        if want != have:
            rows.append({"row": index, "expected": want, "got": have})
            if len(rows) == MAX_ROWS:
                break
    return rows


def text_diff(expected: str, got: str) -> str:
    lines = list(
        difflib.unified_diff(
            expected.splitlines(), got.splitlines(), "artifact", "reproduced", lineterm=""
        )
    )
    if len(lines) > MAX_DIFF_LINES:
        lines = [*lines[:MAX_DIFF_LINES], f"… {len(lines) - MAX_DIFF_LINES} more line(s)"]
    return "\n".join(lines)


def compare(expected: bytes, got: bytes, media_type: str) -> dict[str, Any]:
    """``{reproduced, identical, sha256, difference?}``: identical bytes, or equal once
    normalised (an image's metadata), is reproduced; otherwise what differs."""
    digest = hashlib.sha256(got).hexdigest()
    if expected == got:
        return {"reproduced": True, "identical": True, "sha256": digest}
    if normalized(expected, media_type) == normalized(got, media_type):
        note = "the image is the same once its metadata is set aside; the bytes differ"
        return {"reproduced": True, "identical": False, "sha256": digest, "note": note}
    found = difference(expected, got, media_type)
    return {"reproduced": False, "identical": False, "sha256": digest, **found}


def difference(expected: bytes, got: bytes, media_type: str) -> dict[str, Any]:
    if media_type.startswith("image/") and media_type != "image/svg+xml":
        return {
            "difference": {
                "kind": "image",
                "sizes": [len(expected), len(got)],
                "note": "the pixels differ" if png_pixels(got) else "the image bytes differ",
            }
        }
    if not is_textual(media_type):
        return {"difference": {"kind": "bytes", "sizes": [len(expected), len(got)]}}
    want, have = expected.decode(errors="replace"), got.decode(errors="replace")
    rows_want, rows_have = table_rows(want, media_type), table_rows(have, media_type)
    if rows_want is not None and rows_have is not None:
        rows = first_differing_rows(rows_want, rows_have)
        return {"difference": {"kind": "table", "rows": rows}}
    return {"difference": {"kind": "text", "diff": text_diff(want, have)}}


def nondeterminism(code: list[str]) -> list[str]:
    """What in the replayed code may give another result each time (a static look)."""
    text = "\n".join(code)
    found = [why for why, pattern in NONDETERMINISM.items() if pattern.search(text)]
    if found and SEEDED.search(text):
        found = [f for f in found if not f.startswith("random numbers")]
    return found
