"""What a reproduction says differs (issue 49.2), pure: text diffs, the first differing rows of
a table, images after their metadata, and what in code varies by itself."""

from __future__ import annotations

import struct
import zlib

from jupyter_resolve.artifacts.compare import compare, nondeterminism, png_pixels


def png(pixels: bytes, text: bytes = b"", level: int = 6) -> bytes:
    """A 2×1 greyscale PNG with ``pixels``, a text chunk and a compression level of choice."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(kind + body) & 0xFFFFFFFF
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", 2, 1, 8, 0, 0, 0, 0)
    extra = chunk(b"tEXt", b"Software\x00" + text) if text else b""
    idat = chunk(b"IDAT", zlib.compress(b"\x00" + pixels, level))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + extra + idat + chunk(b"IEND", b"")


def test_the_same_bytes_reproduce() -> None:
    assert compare(b"42", b"42", "text/plain") | {"sha256": ""} == {
        "reproduced": True,
        "identical": True,
        "sha256": "",
    }


def test_text_differs_by_a_unified_diff() -> None:
    found = compare(b"a\nb\nc\n", b"a\nB\nc\n", "text/plain")
    assert found["reproduced"] is False
    diff = found["difference"]["diff"]
    assert "-b" in diff and "+B" in diff and diff.startswith("--- artifact")


def test_tables_differ_by_their_first_differing_rows() -> None:
    csv = compare(b"a,b\n1,2\n3,4\n", b"a,b\n1,2\n3,5\n9,9\n", "text/csv")["difference"]
    assert csv == {
        "kind": "table",
        "rows": [
            {"row": 2, "expected": ["3", "4"], "got": ["3", "5"]},
            {"row": 3, "expected": None, "got": ["9", "9"]},
        ],
    }
    html = "<table><tr><th>n</th></tr><tr><td>{}</td></tr></table>"
    frame = compare(html.format(1).encode(), html.format(2).encode(), "text/html")
    assert frame["difference"]["rows"] == [{"row": 1, "expected": ["1"], "got": ["2"]}]


def test_images_are_compared_after_their_metadata() -> None:
    first = png(b"\x10\x20", text=b"matplotlib 3.8", level=9)
    again = png(b"\x10\x20", text=b"matplotlib 3.9", level=1)
    assert first != again and png_pixels(first) == png_pixels(again)
    same = compare(first, again, "image/png")
    assert same["reproduced"] is True and same["identical"] is False
    other = compare(first, png(b"\x10\x21"), "image/png")
    assert other["reproduced"] is False and other["difference"]["kind"] == "image"
    svg = b"<svg><metadata><dc:date>%s</dc:date></metadata><rect/></svg>"
    assert compare(svg % b"2025", svg % b"2026", "image/svg+xml")["reproduced"] is True


def test_what_varies_by_itself_is_named() -> None:
    assert nondeterminism(["import random\nx = random.random()"]) == [
        "random numbers (random, numpy.random) without a seed set in the code"
    ]
    assert nondeterminism(["import random\nrandom.seed(1)\nx = random.random()"]) == []
    assert nondeterminism(["from datetime import datetime\nprint(datetime.now())"]) == [
        "the clock (time, datetime.now, today)"
    ]
    assert nondeterminism(["print(sum(range(10)))"]) == []
