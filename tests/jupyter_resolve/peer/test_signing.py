"""Signing: canonical string, HMAC, time window, nonce replay (pure)."""

from __future__ import annotations

import hashlib
import hmac

import pytest

from jupyter_resolve.peer.signing import (
    MAX_SKEW,
    NonceCache,
    SignatureError,
    canonical,
    is_signed,
    sign,
    signed_headers,
    verify,
)

SECRETS = {"alpha": "alpha-secret"}
NOW = 1_800_000_000.0
BODY = b'{"tool": "resolve.tools", "arguments": {}}'


def headers(**over: str) -> dict[str, str]:
    signed = signed_headers("alpha", "alpha-secret", BODY, now=NOW, nonce="nonce-0001")
    return {**signed, **over}


def check(
    h: dict[str, str], *, body: bytes = BODY, now: float = NOW, cache: NonceCache | None = None
) -> str:
    try:
        return verify(
            SECRETS, h, body, now=now, nonces=cache if cache is not None else NonceCache()
        ).peer
    except SignatureError as exc:
        return f"refused:{exc.reason}"


def test_canonical_string_and_hex_hmac() -> None:
    assert canonical("1700000000", "abc", b"{}") == b"1700000000\nabc\n{}"
    expected = hmac.new(b"k", b"1700000000\nabc\n{}", hashlib.sha256).hexdigest()
    assert sign("k", "1700000000", "abc", b"{}") == expected


def test_a_good_signature_is_accepted() -> None:
    assert check(headers()) == "alpha"
    upper = headers()
    upper["X-Resolve-Signature"] = upper["X-Resolve-Signature"].upper()
    assert check(upper) == "alpha"


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"X-Resolve-Signature": "0" * 64}, "bad_signature"),
        ({"X-Resolve-Signature": "zz"}, "bad_signature"),
        ({"X-Resolve-Peer": "mallory"}, "bad_signature"),
        ({"X-Resolve-Timestamp": "soon"}, "bad_timestamp"),
        ({"X-Resolve-Nonce": "x"}, "bad_nonce"),
        ({"X-Resolve-Nonce": ""}, "missing"),
    ],
)
def test_refusals(change: dict[str, str], reason: str) -> None:
    assert check(headers(**change)) == f"refused:{reason}"


def test_a_changed_body_breaks_the_signature() -> None:
    assert check(headers(), body=BODY + b" ") == "refused:bad_signature"


def test_timestamp_window_is_300_seconds_either_way() -> None:
    assert MAX_SKEW == 300
    assert check(headers(), now=NOW + 300) == "alpha"
    assert check(headers(), now=NOW - 300) == "alpha"
    assert check(headers(), now=NOW + 301) == "refused:stale"
    assert check(headers(), now=NOW - 301) == "refused:stale"


def test_a_nonce_is_accepted_once_per_peer() -> None:
    cache = NonceCache()
    assert check(headers(), cache=cache) == "alpha"
    assert check(headers(), cache=cache) == "refused:replayed"
    # a bad signature never records its nonce
    fresh = signed_headers("alpha", "alpha-secret", BODY, now=NOW, nonce="nonce-0002")
    assert check({**fresh, "X-Resolve-Signature": "0" * 64}, cache=cache) == "refused:bad_signature"
    assert check(fresh, cache=cache) == "alpha"


def test_nonce_cache_expires_and_stays_bounded() -> None:
    cache = NonceCache(window=300, capacity=3)
    for i in range(3):
        assert cache.admit("p", f"n{i}", NOW + i, NOW)
    assert len(cache) == 3
    # full: the oldest is dropped, and its timestamp (and older) are refused from then on
    assert cache.admit("p", "n3", NOW + 3, NOW)
    assert len(cache) == 3
    assert not cache.admit("p", "n0", NOW, NOW)
    assert not cache.admit("p", "other", NOW, NOW)
    assert cache.admit("p", "later", NOW + 5, NOW)
    # entries expire once their timestamp is out of the window
    assert cache.admit("q", "n0", NOW + 10, NOW + 1000)
    assert len(cache) == 1


def test_is_signed() -> None:
    assert is_signed(headers())
    assert is_signed({"X-Resolve-Signature": "x"})
    assert not is_signed({"Authorization": "token abc"})
