"""A streaming ``POST`` over a plain asyncio connection, for ``http://`` providers.

httpx reads a chunked answer through several layers per chunk — a good part of the gateway's
CPU per streamed token. A local server (Ollama, vLLM, llama.cpp, LM Studio, a LiteLLM proxy)
is reached over plain HTTP with no proxy between, so its stream is read here: one request,
the response head, then the body decoded a whole read at a time (:mod:`.chunked`). TLS,
proxies and everything else stay with httpx (:mod:`._http`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import AsyncIterator
from urllib.parse import urlsplit

from .chunked import ChunkedDecoder, ChunkedError

HEAD_MAX = 64 * 1024
READ_SIZE = 256 * 1024
PROXY_VARIABLES = ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY")


class RawHTTPError(Exception):
    """The connection failed, broke off or did not speak HTTP/1.1."""


class RawTimeout(RawHTTPError):
    """Nothing came for the read timeout (or the connection was not made in time)."""


def usable_raw(url: str, loopback: bool) -> bool:
    """Whether ``url`` can be streamed here: plain HTTP, with no proxy that would apply."""
    if urlsplit(url).scheme != "http":
        return False
    return loopback or not any(os.environ.get(name) for name in PROXY_VARIABLES)


class RawResponse:
    """One answer: its status and headers, then its body as it comes."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        status: int,
        headers: list[tuple[str, str]],
        read_timeout: float,
    ) -> None:
        self.status = status
        self.headers = headers
        self._reader = reader
        self._writer = writer
        self._read_timeout = read_timeout
        self._last_read = time.monotonic()
        self._timed_out = False
        self._watchdog: asyncio.TimerHandle | None = None

    def header(self, name: str) -> str | None:
        name = name.lower()
        return next((v for k, v in reversed(self.headers) if k.lower() == name), None)

    async def pieces(self) -> AsyncIterator[bytes]:
        """The body, decoded from its framing, as the network delivers it."""
        chunked = "chunked" in (self.header("transfer-encoding") or "").lower()
        length = self.header("content-length")
        left = int(length) if length and length.strip().isdigit() and not chunked else None
        decoder = ChunkedDecoder() if chunked else None
        self._arm()
        try:
            while left is None or left > 0:
                data = await self._reader.read(READ_SIZE if left is None else min(left, READ_SIZE))
                self._last_read = time.monotonic()
                if not data:
                    if (decoder is not None and not decoder.done) or left:
                        raise RawHTTPError("the connection closed in the middle of the answer")
                    return
                if left is not None:
                    left -= len(data)
                if decoder is None:
                    yield data
                    continue
                decoded = decoder.feed(data)
                if decoded:
                    yield b"".join(decoded)  # a read's chunks as one piece: one relay step
                if decoder.done:
                    return
        except ChunkedError as exc:
            raise RawHTTPError(f"the answer's chunked coding is broken: {exc}") from exc
        except (OSError, asyncio.IncompleteReadError) as exc:
            if self._timed_out:
                raise RawTimeout(f"nothing came for {self._read_timeout:g} s") from exc
            raise RawHTTPError(f"{type(exc).__name__}: {exc}") from exc
        finally:
            self._disarm()

    async def read(self, limit: int = 1024 * 1024) -> bytes:
        """The whole body (an error's), cut at ``limit`` bytes."""
        body = b""
        async for piece in self.pieces():
            body += piece
            if len(body) >= limit:
                break
        return body[:limit]

    async def aclose(self) -> None:
        self._disarm()
        self._writer.close()
        with contextlib.suppress(Exception):
            await self._writer.wait_closed()

    # a timer that checks now and then, rather than a timeout around every read
    def _arm(self) -> None:
        loop = asyncio.get_running_loop()
        self._watchdog = loop.call_later(self._read_timeout, self._check)

    def _disarm(self) -> None:
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None

    def _check(self) -> None:
        idle = time.monotonic() - self._last_read
        if idle >= self._read_timeout:
            self._timed_out = True
            self._writer.transport.abort()
            return
        loop = asyncio.get_running_loop()
        self._watchdog = loop.call_later(self._read_timeout - idle, self._check)


async def raw_post(
    url: str, headers: dict[str, str], body: bytes, *, connect_timeout: float, read_timeout: float
) -> RawResponse:
    """Send ``POST url`` with ``body`` (JSON) and return the answer once its head is read."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or 80
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    authority = f"[{host}]" if ":" in host else host
    if parts.port:
        authority += f":{port}"
    lines = [
        f"POST {target} HTTP/1.1",
        f"Host: {authority}",
        "Content-Type: application/json",
        f"Content-Length: {len(body)}",
        "Connection: close",
        *(f"{name}: {value}" for name, value in headers.items()),
    ]
    if any("\r" in line or "\n" in line for line in lines):
        raise RawHTTPError("a request header holds a line break")
    try:
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection(host, port, limit=HEAD_MAX), connect_timeout
        )
    except asyncio.TimeoutError as exc:
        raise RawTimeout(f"no connection within {connect_timeout:g} s") from exc
    except OSError as exc:
        raise RawHTTPError(f"{type(exc).__name__}: {exc}") from exc
    try:
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), read_timeout)
    except asyncio.TimeoutError as exc:
        writer.close()
        raise RawTimeout(f"no answer within {read_timeout:g} s") from exc
    except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError) as exc:
        writer.close()
        raise RawHTTPError(f"{type(exc).__name__}: {exc}") from exc
    status, answer_headers = _head(head)
    if status == 0:
        writer.close()
        raise RawHTTPError("the answer is not HTTP/1.x")
    return RawResponse(reader, writer, status, answer_headers, read_timeout)


def _head(head: bytes) -> tuple[int, list[tuple[str, str]]]:
    lines = head.decode("latin-1").split("\r\n")
    first = lines[0].split(" ", 2)
    if len(first) < 2 or not first[0].startswith("HTTP/1.") or not first[1].isdigit():
        return 0, []
    headers = []
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if colon and name.strip():
            headers.append((name.strip(), value.strip()))
    return int(first[1]), headers
