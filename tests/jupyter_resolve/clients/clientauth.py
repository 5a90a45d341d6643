"""Shared by the client scripts (run by the client venvs' interpreters, where only the client's
own packages are installed): the command line, the two auth schemes the card declares, and the
report. The signature is made here from the card's description alone, not from our code."""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import sys
import time
from typing import Any

import httpx


def arguments() -> tuple[str, dict[str, str], str]:
    """``SCRIPT AGENT_URL AUTH_JSON MODE``: AUTH_JSON is {"token": ...} or {"peer", "secret"}."""
    url, auth, mode = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
    return url, auth, mode


def http_client(auth: dict[str, str]) -> httpx.AsyncClient:
    """An httpx client that authenticates every request as ``auth`` says."""
    if "token" in auth:
        return httpx.AsyncClient(headers={"Authorization": f"token {auth['token']}"}, timeout=120.0)
    peer, secret = auth["peer"], auth["secret"]

    async def sign(request: httpx.Request) -> None:
        body = request.read()
        timestamp, nonce = str(int(time.time())), secrets.token_hex(16)
        path = request.url.raw_path.split(b"?")[0].decode()
        head = "\n".join((request.method, path, request.headers["host"], peer, timestamp, nonce))
        digest = hmac.new(secret.encode(), head.encode() + b"\n" + body, hashlib.sha256)
        request.headers["X-Resolve-Peer"] = peer
        request.headers["X-Resolve-Timestamp"] = timestamp
        request.headers["X-Resolve-Nonce"] = nonce
        request.headers["X-Resolve-Signature"] = "v2=" + digest.hexdigest()

    return httpx.AsyncClient(event_hooks={"request": [sign]}, timeout=120.0)


def report(result: dict[str, Any]) -> None:
    print(json.dumps(result))
