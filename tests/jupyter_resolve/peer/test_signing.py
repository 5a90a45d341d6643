"""Signing: the v2 canonical string, HMAC, what it binds, v1 only when allowed, the time window,
nonce replay (pure)."""

from __future__ import annotations

import hashlib
import hmac

import pytest

from jupyter_resolve.peer.signing import (
    MAX_SKEW,
    NonceCache,
    SignatureError,
    Target,
    canonical,
    canonical_v1,
    is_signed,
    sign,
    sign_v1,
    signed_headers,
    signed_headers_v1,
    verify,
)

SECRETS = {"alpha": "alpha-secret", "twin": "alpha-secret"}
NOW = 1_800_000_000.0
BODY = b'{"tool": "resolve.tools", "arguments": {}}'
URL = "http://127.0.0.1:8888/base/resolve/peer/invoke"
TARGET = Target("POST", "/base/resolve/peer/invoke", "127.0.0.1:8888")


def headers(**over: str) -> dict[str, str]:
    signed = signed_headers("alpha", "alpha-secret", BODY, url=URL, now=NOW, nonce="nonce-0001")
    return {**signed, **over}


def check(
    h: dict[str, str],
    *,
    body: bytes = BODY,
    target: Target = TARGET,
    now: float = NOW,
    cache: NonceCache | None = None,
    allow_v1: bool = False,
) -> str:
    try:
        return verify(
            SECRETS,
            h,
            body,
            target=target,
            now=now,
            nonces=cache if cache is not None else NonceCache(),
            allow_v1=allow_v1,
        ).peer
    except SignatureError as exc:
        return f"refused:{exc.reason}"


def test_canonical_string_and_hex_hmac() -> None:
    target = Target("POST", "/b/resolve/peer/a2a", "host:1")
    expected_bytes = b"POST\n/b/resolve/peer/a2a\nhost:1\npeer\n1700000000\nabc\n{}"
    assert canonical(target, "peer", "1700000000", "abc", b"{}") == expected_bytes
    expected = hmac.new(b"k", expected_bytes, hashlib.sha256).hexdigest()
    assert sign("k", target, "peer", "1700000000", "abc", b"{}") == expected
    assert canonical_v1("1700000000", "abc", b"{}") == b"1700000000\nabc\n{}"


def test_target_of_url_is_what_an_http_client_sends() -> None:
    assert Target.of_url(URL) == TARGET
    assert Target.of_url("https://user:pw@hub.example/user/ana/resolve/peer/a2a", "post") == (
        Target("POST", "/user/ana/resolve/peer/a2a", "hub.example")
    )
    assert Target.of_url("http://h:80/x").host == "h"
    assert Target.of_url("http://[::1]:9/x").host == "[::1]:9"


def test_a_good_signature_is_accepted() -> None:
    h = headers()
    assert h["X-Resolve-Signature"].startswith("v2=")
    assert check(h) == "alpha"
    upper = headers()
    upper["X-Resolve-Signature"] = "v2=" + upper["X-Resolve-Signature"][3:].upper()
    assert check(upper) == "alpha"


@pytest.mark.parametrize(
    "target",
    [
        Target("GET", TARGET.path, TARGET.host),  # another method
        Target("POST", "/base/resolve/peer/a2a", TARGET.host),  # another endpoint
        Target("POST", "/resolve/peer/invoke", TARGET.host),  # another base URL
        Target("POST", TARGET.path, "127.0.0.1:9999"),  # another server
        Target("POST", TARGET.path, "evil.example"),
    ],
)
def test_a_v2_signature_is_bound_to_method_path_and_host(target: Target) -> None:
    assert check(headers(), target=target) == "refused:bad_signature"


def test_a_v2_signature_is_bound_to_the_peer_id() -> None:
    # twin shares alpha's secret: under v1 alpha's request passes as twin's; under v2 it does not
    assert check(headers(**{"X-Resolve-Peer": "twin"})) == "refused:bad_signature"
    v1 = signed_headers_v1("alpha", "alpha-secret", BODY, now=NOW, nonce="nonce-0001")
    assert check({**v1, "X-Resolve-Peer": "twin"}, allow_v1=True) == "twin"


def test_v1_is_refused_by_default_and_accepted_when_allowed() -> None:
    v1 = signed_headers_v1("alpha", "alpha-secret", BODY, now=NOW, nonce="nonce-0001")
    assert check(v1) == "refused:v1_refused"
    try:
        verify(SECRETS, v1, BODY, target=TARGET, now=NOW, nonces=NonceCache())
    except SignatureError as exc:
        assert "peer_signature_v1" in exc.message and "v2=" in exc.message
    assert check(v1, allow_v1=True) == "alpha"
    # v1 does not bind the target, which is why it is off by default
    elsewhere = Target("GET", "/other", "evil.example")
    assert check(v1, allow_v1=True, target=elsewhere) == "alpha"
    assert (
        sign_v1("alpha-secret", v1["X-Resolve-Timestamp"], "nonce-0001", BODY)
        == (v1["X-Resolve-Signature"])
    )
    # a v1 signature sent as v2 is not a v2 signature
    as_v2 = {**v1, "X-Resolve-Signature": "v2=" + v1["X-Resolve-Signature"]}
    assert check(as_v2) == "refused:bad_signature"


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"X-Resolve-Signature": "v2=" + "0" * 64}, "bad_signature"),
        ({"X-Resolve-Signature": "v2=zz"}, "bad_signature"),
        ({"X-Resolve-Signature": "v3=" + "0" * 64}, "bad_signature"),
        ({"X-Resolve-Signature": "zz"}, "bad_signature"),
        ({"X-Resolve-Peer": "mallory"}, "bad_signature"),
        ({"X-Resolve-Peer": "a" * 300}, "bad_peer"),
        ({"X-Resolve-Peer": "../alpha"}, "bad_peer"),
        ({"X-Resolve-Timestamp": "soon"}, "bad_timestamp"),
        ({"X-Resolve-Timestamp": "1800000000\n"}, "bad_timestamp"),
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
    fresh = signed_headers("alpha", "alpha-secret", BODY, url=URL, now=NOW, nonce="nonce-0002")
    bad = {**fresh, "X-Resolve-Signature": "v2=" + "0" * 64}
    assert check(bad, cache=cache) == "refused:bad_signature"
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
