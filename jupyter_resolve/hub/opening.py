"""Opening one request upstream, on the fastest way there is (:func:`open_upstream`).

A plain-``http://`` upstream with no proxy between (a LiteLLM proxy in the cluster, vLLM, a
local server) is reached over the package's own asyncio client (``providers/raw_http.py``), with
its connections kept alive; anything else (TLS, a proxy) through httpx. Each way's failures come
out as :class:`UpstreamUnreachable`, so the relay need not know which was taken.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx

from ..contracts.errors import ResolveError
from ..providers._http import is_loopback
from ..providers.raw_http import ConnectionPool, RawHTTPError, raw_post, usable_raw

CONNECT_TIMEOUT = 10.0
READ_TIMEOUT = 600.0  # between two pieces of an answer


class UpstreamUnreachable(ResolveError, ConnectionError):
    """The upstream could not be reached or broke off; the message is safe to show."""

    status = 502
    code = "upstream_unreachable"


@dataclass
class Opened:
    """An answer whose head is in: its status and type, then its body as it comes."""

    status: int
    content_type: str
    pieces: AsyncIterator[bytes]
    read: Callable[[], Awaitable[bytes]]  # the whole body (an error's), bounded
    close: Callable[[], Awaitable[None]]


async def _raw(url: str, headers: dict[str, str], body: bytes, pool: ConnectionPool) -> Opened:
    sent = {k: v for k, v in headers.items() if k.lower() != "content-type"}  # raw_post sets it
    try:
        response = await raw_post(
            url,
            sent,
            body,
            connect_timeout=CONNECT_TIMEOUT,
            read_timeout=READ_TIMEOUT,
            pool=pool,
        )
    except RawHTTPError as exc:
        raise UpstreamUnreachable(f"cannot reach the upstream at {url}: {exc}") from exc

    async def pieces() -> AsyncIterator[bytes]:
        try:
            async for piece in response.pieces():
                yield piece
        except RawHTTPError as exc:
            raise UpstreamUnreachable(f"the upstream at {url} broke off: {exc}") from exc

    content_type = response.header("content-type") or "application/json"
    return Opened(response.status, content_type, pieces(), response.read, response.aclose)


async def _httpx(
    client: httpx.AsyncClient, url: str, headers: dict[str, str], body: bytes
) -> Opened:
    built = client.build_request("POST", url, content=body, headers=headers)
    try:
        response = await client.send(built, stream=True)
    except httpx.HTTPError as exc:
        raise UpstreamUnreachable(
            f"cannot reach the upstream at {url}: {str(exc) or type(exc).__name__}"
        ) from exc

    async def pieces() -> AsyncIterator[bytes]:
        try:
            async for piece in response.aiter_bytes():
                yield piece
        except httpx.HTTPError as exc:
            raise UpstreamUnreachable(
                f"the upstream at {url} broke off: {type(exc).__name__}"
            ) from exc

    content_type = response.headers.get("content-type", "application/json")
    return Opened(response.status_code, content_type, pieces(), response.aread, response.aclose)


async def open_upstream(
    client: httpx.AsyncClient,
    pool: ConnectionPool,
    url: str,
    headers: dict[str, str],
    body: dict[str, Any],
) -> Opened:
    """POST ``body`` as JSON to ``url``; the answer once its head is in."""
    data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
    if usable_raw(url, is_loopback(url)):
        return await _raw(url, headers, data, pool)
    return await _httpx(client, url, {**headers, "Content-Type": "application/json"}, data)
