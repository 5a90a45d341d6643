"""A streaming HTTP/1.1 POST on a bare asyncio connection, for the concurrency bursts.

The bursts once came from one ``httpx.AsyncClient``: its connection pool looks over every
connection for every request it places and every response it finishes (httpcore's
``_assign_requests_to_connections``), so a burst of N chats cost the client O(N²) work, on the
same two cores as the gateway it measures: at N = 100 the client spent as much CPU as the
gateway. A burst's chats come from many clients, each with one connection; this is that
client, and costs next to nothing per read.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from urllib.parse import urlsplit

HEAD_MAX = 64 * 1024
CHUNK_MAX = 16 * 1024 * 1024  # one chunk of the answer: more is not the gateway's


class HTTPStatusError(Exception):
    """The server answered with a status other than 200."""

    def __init__(self, status: int, text: str) -> None:
        super().__init__(f"HTTP {status}: {text[:200]}")
        self.status = status


async def stream_post(
    url: str, headers: dict[str, str], body: bytes, timeout: float = 300.0
) -> AsyncIterator[bytes]:
    """POST ``body`` to ``url`` and yield the response body as it arrives (chunked or not).

    ``timeout`` bounds the connection, the head and every read after it. Raises
    :class:`HTTPStatusError` for a status other than 200, ``ValueError`` for a response that is
    not HTTP or not the chunked coding, ``TimeoutError`` and ``OSError``/``asyncio`` errors as
    they come."""
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    target = parts.path + (f"?{parts.query}" if parts.query else "")
    reader, writer = await asyncio.wait_for(
        asyncio.open_connection(host, port, limit=HEAD_MAX), timeout
    )
    try:
        lines = [f"POST {target} HTTP/1.1", f"Host: {host}:{port}"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        lines += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
        head = (await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout)).decode("latin-1")
        status_line, _, rest = head.partition("\r\n")
        version, _, status_text = status_line.partition(" ")
        if not version.startswith("HTTP/1.") or not status_text[:3].isdigit():
            raise ValueError(f"not an HTTP response: {status_line[:80]!r}")
        fields = {
            name.strip().lower(): value.strip()
            for name, _, value in (line.partition(":") for line in rest.split("\r\n"))
        }
        chunked = "chunked" in fields.get("transfer-encoding", "").lower()
        pieces = _chunks(reader, timeout) if chunked else _until_closed(reader, timeout)
        status = int(status_text[:3])
        if status != 200:
            text = b"".join([piece async for piece in pieces]).decode(errors="replace")
            raise HTTPStatusError(status, text)
        async for piece in pieces:
            yield piece
    finally:
        writer.close()
        with contextlib.suppress(Exception):
            await writer.wait_closed()


async def _chunks(reader: asyncio.StreamReader, timeout: float) -> AsyncIterator[bytes]:
    while True:
        size_line = await asyncio.wait_for(reader.readuntil(b"\r\n"), timeout)
        digits = size_line.split(b";", 1)[0].strip()
        if not digits or len(digits) > 8 or digits.strip(b"0123456789abcdefABCDEF"):
            raise ValueError(f"not a chunk size: {size_line[:40]!r}")
        size = int(digits, 16)
        if size > CHUNK_MAX:
            raise ValueError(f"a chunk of {size} bytes")
        if size == 0:
            await asyncio.wait_for(reader.readuntil(b"\r\n"), timeout)  # no trailers come
            return
        data = await asyncio.wait_for(reader.readexactly(size + 2), timeout)
        if not data.endswith(b"\r\n"):
            raise ValueError("a chunk longer than its size")
        yield data[:-2]


async def _until_closed(reader: asyncio.StreamReader, timeout: float) -> AsyncIterator[bytes]:
    while piece := await asyncio.wait_for(reader.read(64 * 1024), timeout):
        yield piece
