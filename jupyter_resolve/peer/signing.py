"""Request signing for peers (pure: no I/O, the clock is an argument).

A peer signs ``timestamp + "\\n" + nonce + "\\n" + raw body`` with HMAC-SHA256 under the secret it
shares with this server (``c.Resolve.peer_secrets``) and sends the hex digest with its id, the
timestamp (unix seconds) and the nonce in four headers. A request is accepted once: a timestamp
more than :data:`MAX_SKEW` seconds off, or a nonce seen before, is refused.
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

HEADER_PEER = "X-Resolve-Peer"
HEADER_TIMESTAMP = "X-Resolve-Timestamp"
HEADER_NONCE = "X-Resolve-Nonce"
HEADER_SIGNATURE = "X-Resolve-Signature"
HEADERS = (HEADER_PEER, HEADER_TIMESTAMP, HEADER_NONCE, HEADER_SIGNATURE)

MAX_SKEW = 300.0
"""Seconds a request's timestamp may differ from this server's clock."""

_TIMESTAMP = re.compile(r"^[0-9]{1,12}(\.[0-9]{1,6})?$")
_NONCE = re.compile(r"^[A-Za-z0-9_.:-]{8,128}$")
_SIGNATURE = re.compile(r"^[0-9a-fA-F]{64}$")
# Compared against when the peer is unknown, so that an unknown peer costs the same time.
_DUMMY_SECRET = secrets.token_hex(32)


def canonical(timestamp: str, nonce: str, body: bytes) -> bytes:
    """The signed bytes: ``timestamp \\n nonce \\n body``."""
    return timestamp.encode() + b"\n" + nonce.encode() + b"\n" + body


def sign(secret: str, timestamp: str, nonce: str, body: bytes) -> str:
    """Hex HMAC-SHA256 of the canonical string under ``secret``."""
    return hmac.new(secret.encode(), canonical(timestamp, nonce, body), hashlib.sha256).hexdigest()


def signed_headers(
    peer: str,
    secret: str,
    body: bytes,
    *,
    now: float | None = None,
    nonce: str | None = None,
) -> dict[str, str]:
    """The four headers a peer sends with ``body`` (a client-side helper)."""
    timestamp = str(int(time.time() if now is None else now))
    nonce = nonce or secrets.token_hex(16)
    return {
        HEADER_PEER: peer,
        HEADER_TIMESTAMP: timestamp,
        HEADER_NONCE: nonce,
        HEADER_SIGNATURE: sign(secret, timestamp, nonce, body),
    }


class SignatureError(Exception):
    """Why a signed request was refused (the handler answers 401)."""

    def __init__(self, message: str, *, reason: str) -> None:
        super().__init__(message)
        self.message = message
        self.reason = reason  # a short word for the log: unknown_peer, bad_signature, stale, ...


class NonceCache:
    """Nonces seen, per peer, for as long as their timestamp would still be accepted.

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


def is_signed(headers: Mapping[str, str]) -> bool:
    """Whether a request claims to be signed (carries any of the four headers)."""
    return any(headers.get(name) for name in HEADERS)


def verify(
    peer_secrets: Mapping[str, str],
    headers: Mapping[str, str],
    body: bytes,
    *,
    now: float,
    nonces: NonceCache,
) -> Signed:
    """Check a signed request; raise :class:`SignatureError` saying why it is refused.

    The nonce is recorded only once the signature holds, so unsigned junk cannot fill the cache.
    """
    peer = headers.get(HEADER_PEER) or ""
    timestamp = headers.get(HEADER_TIMESTAMP) or ""
    nonce = headers.get(HEADER_NONCE) or ""
    signature = headers.get(HEADER_SIGNATURE) or ""
    if not (peer and timestamp and nonce and signature):
        missing = ", ".join(name for name in HEADERS if not headers.get(name))
        raise SignatureError(f"missing signature headers: {missing}", reason="missing")
    if not _TIMESTAMP.match(timestamp):
        raise SignatureError(
            f"{HEADER_TIMESTAMP} must be unix seconds, not {timestamp[:32]!r}",
            reason="bad_timestamp",
        )
    if not _NONCE.match(nonce):
        raise SignatureError(
            f"{HEADER_NONCE} must be 8 to 128 characters of A-Z a-z 0-9 _ . : -", reason="bad_nonce"
        )
    when = float(timestamp)
    if abs(now - when) > MAX_SKEW:
        raise SignatureError(
            f"{HEADER_TIMESTAMP} is more than {int(MAX_SKEW)} s off this server's clock",
            reason="stale",
        )
    secret = peer_secrets.get(peer)
    expected = sign(secret if secret else _DUMMY_SECRET, timestamp, nonce, body)
    given = signature.lower() if _SIGNATURE.match(signature) else ""
    matches = hmac.compare_digest(expected, given)
    if not secret or not matches:
        raise SignatureError("unknown peer or bad signature", reason="bad_signature")
    if not nonces.admit(peer, nonce, when, now):
        raise SignatureError(f"{HEADER_NONCE} was used before", reason="replayed")
    return Signed(peer=peer, timestamp=when, nonce=nonce)
