"""Media types of artifacts: normalized at promotion, judged when served (issue 14 item 9)."""

from __future__ import annotations

import pytest

from jupyter_resolve.artifacts.media import normalize_media_type, served_as
from jupyter_resolve.contracts.errors import BadMediaType


@pytest.mark.parametrize(
    ("value", "normal"),
    [
        ("text/plain", "text/plain"),
        ("TEXT/HTML", "text/html"),
        ("text/html; charset=utf-8", "text/html"),
        (" Text/Html ;charset=UTF-8; q=1", "text/html"),
        ("image/SVG+XML", "image/svg+xml"),
        ("application/vnd.ms-excel", "application/vnd.ms-excel"),
    ],
)
def test_media_types_are_lower_case_type_and_subtype(value: str, normal: str) -> None:
    assert normalize_media_type(value) == normal


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("text/plain\r\nX-Evil: 1", "control character"),
        ("text/plain\n", "control character"),
        ("text/\x00plain", "control character"),
        ("text/pl\tain", "control character"),
        ("text", "not a media type"),
        ("text/", "not a media type"),
        ("/plain", "not a media type"),
        ("text/plain/x", "not a media type"),
        ("te xt/plain", "not a media type"),
        ("téxt/plain", "not a media type"),
        ("", "not a media type"),
    ],
)
def test_bad_media_types_are_refused(value: str, why: str) -> None:
    with pytest.raises(BadMediaType, match=why):
        normalize_media_type(value)


@pytest.mark.parametrize(
    "stored",
    [
        "text/html",
        "TEXT/HTML",
        "text/html; charset=utf-8",
        "application/xhtml+xml",
        "image/svg+xml",
        "image/SVG+XML",
        "text/xml",
        "application/xml",
        "application/atom+xml",
        "application/xslt+xml",
        "application/javascript",
        "application/pdf",
        "application/octet-stream",
        "text/html\r\nX: 1",
        "garbage",
    ],
)
def test_anything_but_passive_types_is_an_attachment(stored: str) -> None:
    header, disposition = served_as(stored)
    assert disposition == "attachment"
    assert "\r" not in header and "\n" not in header


@pytest.mark.parametrize(
    ("stored", "header"),
    [
        ("image/png", "image/png"),
        ("IMAGE/JPEG", "image/jpeg"),
        ("text/plain", "text/plain; charset=utf-8"),
        ("text/csv; charset=latin-1", "text/csv; charset=utf-8"),
        ("application/json", "application/json; charset=utf-8"),
    ],
)
def test_passive_types_are_inline(stored: str, header: str) -> None:
    assert served_as(stored) == (header, "inline")


def test_a_type_that_does_not_normalize_is_served_as_bytes() -> None:
    assert served_as("text/html\r\nSet-Cookie: x=1") == ("application/octet-stream", "attachment")
