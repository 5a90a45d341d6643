"""Request signing for peers (pure: no I/O, the clock is an argument).

A peer signs, with HMAC-SHA256 under the secret it shares with this server
(``c.Resolve.peer_secrets``), the bytes ``METHOD \\n PATH \\n HOST \\n PEER \\n TIMESTAMP \\n
NONCE \\n BODY`` (PATH with the server's base URL and without the query, HOST as sent in the
``Host`` header), and sends ``X-Resolve-Signature: v2=<hex>`` with its id, the timestamp (unix
seconds) and the nonce in three more headers. Binding method, path, host and peer means a
signature made for one request, endpoint, server or peer is worth nothing for another.

A request is accepted once: a timestamp more than :data:`MAX_SKEW` seconds off, or a nonce seen
before, is refused. The old scheme (an unprefixed hex HMAC over ``TIMESTAMP \\n NONCE \\n BODY``)
is refused unless the server sets ``c.Resolve.peer_signature_v1``.
"""

from __future__ import annotations

import hashlib
import heapq
import hmac
import re
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import urlsplit

from ..contracts.errors import SignatureError
from .limits import ID_PATTERN, is_id

HEADER_PEER = "X-Resolve-Peer"
HEADER_TIMESTAMP = "X-Resolve-Timestamp"
HEADER_NONCE = "X-Resolve-Nonce"
HEADER_SIGNATURE = "X-Resolve-Signature"
HEADERS = (HEADER_PEER, HEADER_TIMESTAMP, HEADER_NONCE, HEADER_SIGNATURE)

MAX_SKEW = 300.0
"""Seconds a request's timestamp may differ from this server's clock."""

V2_PREFIX = "v2="

_TIMESTAMP = re.compile(r"[0-9]{1,12}(\.[0-9]{1,6})?")
_NONCE = re.compile(r"[A-Za-z0-9_.:-]{8,128}")
_HEX = re.compile(r"[0-9a-fA-F]{64}")
# Compared against when the peer is unknown, so that an unknown peer costs the same time.
_DUMMY_SECRET = secrets.token_hex(32)


@dataclass(frozen=True)
class Target:
    """What a v2 signature binds besides the body: the request line and the host."""

    method: str
    path: str
    host: str

    @classmethod
    def of_url(cls, url: str, method: str = "POST") -> Target:
        """The target of a request to ``url``, with the Host header an HTTP client sends
        (userinfo dropped, the scheme's default port left out)."""
        parts = urlsplit(url)
        host = parts.netloc.rpartition("@")[2]
        default = {"http": ":80", "https": ":443"}.get(parts.scheme.lower())
        if default and host.endswith(default):
            host = host[: -len(default)]
        return cls(method=method.upper(), path=parts.path or "/", host=host)


def canonical(target: Target, peer: str, timestamp: str, nonce: str, body: bytes) -> bytes:
    """The v2 signed bytes: METHOD, PATH, HOST, PEER, TIMESTAMP, NONCE and BODY, joined by
    newlines."""
    head = "\n".join((target.method.upper(), target.path, target.host, peer, timestamp, nonce))
    return head.encode() + b"\n" + body


def sign(secret: str, target: Target, peer: str, timestamp: str, nonce: str, body: bytes) -> str:
    """Hex HMAC-SHA256 of the v2 canonical bytes under ``secret`` (without the ``v2=``)."""
    message = canonical(target, peer, timestamp, nonce, body)
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def canonical_v1(timestamp: str, nonce: str, body: bytes) -> bytes:
    """The old signed bytes: ``timestamp \\n nonce \\n body`` (see ``peer_signature_v1``)."""
    return timestamp.encode() + b"\n" + nonce.encode() + b"\n" + body


def sign_v1(secret: str, timestamp: str, nonce: str, body: bytes) -> str:
    return hmac.new(
        secret.encode(), canonical_v1(timestamp, nonce, body), hashlib.sha256
    ).hexdigest()


def signed_headers(
    peer: str,
    secret: str,
    body: bytes,
    *,
    url: str,
    method: str = "POST",
    now: float | None = None,
    nonce: str | None = None,
) -> dict[str, str]:
    """The four headers a peer sends with ``body`` to ``url`` (a client-side helper)."""
    timestamp = str(int(time.time() if now is None else now))
    nonce = nonce or secrets.token_hex(16)
    target = Target.of_url(url, method)
    return {
        HEADER_PEER: peer,
        HEADER_TIMESTAMP: timestamp,
        HEADER_NONCE: nonce,
        HEADER_SIGNATURE: V2_PREFIX + sign(secret, target, peer, timestamp, nonce, body),
    }


def signed_headers_v1(
    peer: str, secret: str, body: bytes, *, now: float | None = None, nonce: str | None = None
) -> dict[str, str]:
    """The old scheme's headers (accepted only with ``c.Resolve.peer_signature_v1``)."""
    timestamp = str(int(time.time() if now is None else now))
    nonce = nonce or secrets.token_hex(16)
    return {
        HEADER_PEER: peer,
        HEADER_TIMESTAMP: timestamp,
        HEADER_NONCE: nonce,
        HEADER_SIGNATURE: sign_v1(secret, timestamp, nonce, body),
    }


class Nonces(Protocol):
    """Where nonces are remembered: :class:`NonceCache` (memory) or ``nonces.DiskNonces``."""

    def admit(self, peer: str, nonce: str, timestamp: float, now: float) -> bool: ...


class NonceCache:
    """Nonces seen, per peer, for as long as their timestamp would still be accepted (memory
    only: a restart forgets them; the server uses ``nonces.DiskNonces``).

    Bounded: when full, the entry with the oldest timestamp is dropped and every timestamp up to
    it is refused from then on, so a dropped nonce can never be replayed.
    """

    def __init__(self, *, window: float = MAX_SKEW, capacity: int = 100_000) -> None:
        self.window = window
        self.capacity = capacity
        self.floor = float("-inf")  # timestamps at or below this are refused
        self._seen: set[tuple[str, str]] = set()
        self._heap: list[tuple[float, str, str]] = []

    def __len__(self) -> int:
        return len(self._seen)

    def _expire(self, now: float) -> None:
        while self._heap and self._heap[0][0] + self.window < now:
            _, peer, nonce = heapq.heappop(self._heap)
            self._seen.discard((peer, nonce))

    def admit(self, peer: str, nonce: str, timestamp: float, now: float) -> bool:
        """Record the nonce; False when it was seen before (or is too old to be judged)."""
        self._expire(now)
        if timestamp <= self.floor or (peer, nonce) in self._seen:
            return False
        while len(self._seen) >= self.capacity:
            dropped, old_peer, old_nonce = heapq.heappop(self._heap)
            self._seen.discard((old_peer, old_nonce))
            self.floor = max(self.floor, dropped)
            if timestamp <= self.floor:
                return False
        self._seen.add((peer, nonce))
        heapq.heappush(self._heap, (timestamp, peer, nonce))
        return True


@dataclass(frozen=True)
class Signed:
    """What a verified request carried."""

    peer: str
    timestamp: float
    nonce: str
    version: int = 2


def is_signed(headers: Mapping[str, str]) -> bool:
    """Whether a request claims to be signed (carries any of the four headers)."""
    return any(headers.get(name) for name in HEADERS)


V1_REFUSED = (
    "unprefixed (v1) signatures are refused: sign METHOD\\nPATH\\nHOST\\nPEER\\nTIMESTAMP\\n"
    "NONCE\\nBODY and send 'X-Resolve-Signature: v2=<hex>' (or the server's admin sets "
    "c.Resolve.peer_signature_v1 = True)"
)


def verify(
    peer_secrets: Mapping[str, str],
    headers: Mapping[str, str],
    body: bytes,
    *,
    target: Target,
    now: float,
    nonces: Nonces,
    allow_v1: bool = False,
) -> Signed:
    """Check a signed request to ``target``; raise :class:`SignatureError` saying why it is
    refused.

    The nonce is recorded only once the signature holds, so unsigned junk cannot fill the store.
    """
    peer = headers.get(HEADER_PEER) or ""
    timestamp = headers.get(HEADER_TIMESTAMP) or ""
    nonce = headers.get(HEADER_NONCE) or ""
    signature = (headers.get(HEADER_SIGNATURE) or "").strip()
    if not (peer and timestamp and nonce and signature):
        missing = ", ".join(name for name in HEADERS if not headers.get(name))
        raise SignatureError(f"missing signature headers: {missing}", reason="missing")
    if not is_id(peer):
        raise SignatureError(f"{HEADER_PEER} must match {ID_PATTERN}", reason="bad_peer")
    if not _TIMESTAMP.fullmatch(timestamp):
        raise SignatureError(
            f"{HEADER_TIMESTAMP} must be unix seconds, not {timestamp[:32]!r}",
            reason="bad_timestamp",
        )
    if not _NONCE.fullmatch(nonce):
        raise SignatureError(
            f"{HEADER_NONCE} must be 8 to 128 characters of A-Z a-z 0-9 _ . : -", reason="bad_nonce"
        )
    if signature[:3].lower() == V2_PREFIX:
        version, given = 2, signature[3:]
    elif _HEX.fullmatch(signature):
        if not allow_v1:
            raise SignatureError(V1_REFUSED, reason="v1_refused")
        version, given = 1, signature
    else:
        raise SignatureError(
            f"{HEADER_SIGNATURE} must be 'v2=' and 64 hex digits", reason="bad_signature"
        )
    when = float(timestamp)
    if abs(now - when) > MAX_SKEW:
        raise SignatureError(
            f"{HEADER_TIMESTAMP} is more than {int(MAX_SKEW)} s off this server's clock",
            reason="stale",
        )
    secret = peer_secrets.get(peer)
    key = secret if secret else _DUMMY_SECRET
    if version == 2:
        expected = sign(key, target, peer, timestamp, nonce, body)
    else:
        expected = sign_v1(key, timestamp, nonce, body)
    given = given.lower() if _HEX.fullmatch(given) else ""
    matches = hmac.compare_digest(expected, given)
    if not secret or not matches:
        # what this server signed against is no secret, and it is what a peer gets wrong
        seen = f"; v2 here signs {target.method} {target.path} for host {target.host!r}"
        raise SignatureError(
            "unknown peer or bad signature" + (seen if version == 2 else ""),
            reason="bad_signature",
        )
    if not nonces.admit(peer, nonce, when, now):
        raise SignatureError(f"{HEADER_NONCE} was used before", reason="replayed")
    return Signed(peer=peer, timestamp=when, nonce=nonce, version=version)
