"""Secret values and the forms they travel in (pure): the literal text, and its base64.

A secret base64-encoded inside a longer base64 text (a data URL, a blob, a token) shows as one of
three strings, one per alignment of its first byte within a 3-byte group; the characters at its
edges mix with the neighbouring bytes, so only the part made of the secret's bits alone is
matched. Standard and URL-safe alphabets both. Matching stays literal: a secret split, escaped
or otherwise encoded is not found.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable

MIN_ENCODED = 8
"""Shortest base64 form matched (shorter ones would match ordinary text by chance)."""


def base64_forms(secret: bytes) -> set[str]:
    """The base64 strings that stand for ``secret`` at each of the three alignments."""
    forms: set[str] = set()
    for lead in range(3):
        encoded = base64.b64encode(b"\0" * lead + secret).decode("ascii")
        first = -(-8 * lead // 6)  # the first character made of the secret's bits only
        last = 8 * (lead + len(secret)) // 6  # one past the last such character
        core = encoded[first:last]
        if len(core) >= MIN_ENCODED:
            forms.update({core, core.replace("+", "-").replace("/", "_")})
    return forms


def secret_forms(secrets: Iterable[str], min_length: int) -> list[str]:
    """Every form of every secret of at least ``min_length`` characters, longest first (so a
    longer match is replaced before a part of it)."""
    forms: set[str] = set()
    for secret in secrets:
        if len(secret) >= min_length:
            forms.add(secret)
            forms.update(base64_forms(secret.encode("utf-8")))
    return sorted(forms, key=len, reverse=True)


def replace_forms(text: str, forms: Iterable[str], marker: str) -> str:
    for form in forms:
        text = text.replace(form, marker)
    return text


def holds_secret(data: bytes, forms: Iterable[str]) -> bool:
    """Whether decoded bytes (an image) carry a secret literally or base64-encoded."""
    return any(form.encode("utf-8") in data for form in forms)
