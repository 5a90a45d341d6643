"""A streaming ``POST`` over a plain asyncio connection, for ``http://`` providers.

httpx reads a chunked answer through several layers per chunk — a good part of the gateway's
CPU per streamed token. A local server (Ollama, vLLM, llama.cpp, LM Studio, a LiteLLM proxy)
is reached over plain HTTP with no proxy between, so its stream is read here: one request,
the response head, then the body decoded a whole read at a time (:mod:`.chunked`). TLS,
proxies and everything else stay with httpx (:mod:`._http`).

Connections are kept alive between requests (:class:`ConnectionPool`), as httpx keeps them: a
new connection per round cost a connect and the server's accept before every first token. A
connection goes back to the pool only when its answer was read to its end and the server did
not ask to close it; one that the server closed while it idled is noticed when the request on it
gets no answer at all, and the request is sent once more on a new connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import AsyncIterator
from urllib.parse import urlsplit

from ..contracts.errors import ResolveError
from .chunked import ChunkedDecoder, ChunkedError

HEAD_MAX = 64 * 1024
READ_SIZE = 16 * 1024  # a read is one relay step: small, so the run's own frames get turns between
IDLE_SECONDS = 4.0  # under the 5 s idle timeout of uvicorn (vLLM, LiteLLM) and its kind
IDLE_PER_HOST = 16

Connection = tuple[asyncio.StreamReader, asyncio.StreamWriter]
PROXY_VARIABLES = ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY")


class RawHTTPError(ResolveError):
    """The connection failed, broke off or did not speak HTTP/1.1."""

    code = "connection_failed"


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
        pool: ConnectionPool | None = None,
        key: tuple[str, int] = ("", 0),
        version: str = "HTTP/1.1",
    ) -> None:
        self.status = status
        self.version = version
        self.headers = headers
        self._reader = reader
        self._writer = writer
        self._pool = pool
        self._key = key
        self._ended = False  # the body was read to its end
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
                    self._ended = left <= 0
                if decoder is None:
                    yield data
                    continue
                decoded = decoder.feed(data)
                self._ended = decoder.done and not decoder.pending
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
        """Give the connection back for the next request if its answer was read to its end and
        may be followed by another, else close it."""
        self._disarm()
        if self._pool is not None and self._ended and self._keeps_alive():
            self._pool.put(self._key, (self._reader, self._writer))
            return
        await _close(self._writer)

    def _keeps_alive(self) -> bool:
        """HTTP/1.1 keeps a connection unless the answer says close (1.0 closes by default)."""
        connection = (self.header("connection") or "").lower()
        return self.version == "HTTP/1.1" and "close" not in connection and not self._timed_out

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


class ConnectionPool:
    """Idle connections by (host, port), each kept for ``IDLE_SECONDS`` at most."""

    def __init__(self) -> None:
        self._idle: dict[tuple[str, int], list[tuple[float, Connection]]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None

    def take(self, key: tuple[str, int]) -> Connection | None:
        """An idle connection to ``key`` that still looks open, the newest first."""
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # connections belong to the loop that made them
            self.close()
            self._loop = loop
        idle = self._idle.get(key, [])
        now = time.monotonic()
        while idle:
            since, (reader, writer) = idle.pop()
            usable = now - since < IDLE_SECONDS and not writer.is_closing()
            # bytes that came while it idled (the reader's buffer has no public view) would be
            # read as the next answer: such a connection is closed, never reused
            if usable and not reader.at_eof() and not reader._buffer:  # type: ignore[attr-defined]
                return reader, writer
            writer.close()
        return None

    def put(self, key: tuple[str, int], connection: Connection) -> None:
        idle = self._idle.setdefault(key, [])
        idle.append((time.monotonic(), connection))
        while len(idle) > IDLE_PER_HOST:
            _, (_, writer) = idle.pop(0)
            writer.close()

    def close(self) -> None:
        for idle in self._idle.values():
            for _, (_, writer) in idle:
                with contextlib.suppress(Exception):  # its loop may be closed already
                    writer.close()
        self._idle.clear()


async def _close(writer: asyncio.StreamWriter) -> None:
    writer.close()
    with contextlib.suppress(Exception):
        await writer.wait_closed()


async def raw_post(
    url: str,
    headers: dict[str, str],
    body: bytes,
    *,
    connect_timeout: float,
    read_timeout: float,
    pool: ConnectionPool | None = None,
) -> RawResponse:
    """Send ``POST url`` with ``body`` (JSON) and return the answer once its head is read
    (on a connection from ``pool`` when there is one, kept alive for it afterwards)."""
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
        *(() if pool is not None else ("Connection: close",)),
        *(f"{name}: {value}" for name, value in headers.items()),
    ]
    if any("\r" in line or "\n" in line for line in lines):
        raise RawHTTPError("a request header holds a line break")
    request = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body
    key = (host, port)
    reused = pool.take(key) if pool is not None else None
    if reused is not None:
        try:
            head = await _exchange(*reused, request, read_timeout)
        except _NoAnswer:  # the server closed it while it idled: the request never arrived
            reused = None
    if reused is None:
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(host, port, limit=HEAD_MAX), connect_timeout
            )
        except asyncio.TimeoutError as exc:
            raise RawTimeout(f"no connection within {connect_timeout:g} s") from exc
        except OSError as exc:
            raise RawHTTPError(f"{type(exc).__name__}: {exc}") from exc
        try:
            head = await _exchange(reader, writer, request, read_timeout)
        except _NoAnswer as exc:
            raise RawHTTPError(str(exc)) from exc
    else:
        reader, writer = reused
    version, status, answer_headers = _head(head)
    if status == 0:
        writer.close()
        raise RawHTTPError("the answer is not HTTP/1.x")
    return RawResponse(reader, writer, status, answer_headers, read_timeout, pool, key, version)


class _NoAnswer(RawHTTPError):
    """The connection closed before a byte of the answer came."""


async def _exchange(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes, timeout: float
) -> bytes:
    """Write the request, read the answer's head."""
    try:
        writer.write(request)
        return await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout)
    except asyncio.TimeoutError as exc:
        writer.close()
        raise RawTimeout(f"no answer within {timeout:g} s") from exc
    except asyncio.IncompleteReadError as exc:
        writer.close()
        if not exc.partial:
            raise _NoAnswer("the connection closed before any answer") from exc
        raise RawHTTPError(f"{type(exc).__name__}: {exc}") from exc
    except ConnectionResetError as exc:
        writer.close()
        raise _NoAnswer(f"{type(exc).__name__}: {exc}") from exc
    except (OSError, asyncio.LimitOverrunError) as exc:
        writer.close()
        raise RawHTTPError(f"{type(exc).__name__}: {exc}") from exc


def _head(head: bytes) -> tuple[str, int, list[tuple[str, str]]]:
    """An answer's head: its HTTP version, status (0: not HTTP/1.x) and headers."""
    lines = head.decode("latin-1").split("\r\n")
    first = lines[0].split(" ", 2)
    if len(first) < 2 or not first[0].startswith("HTTP/1.") or not first[1].isdigit():
        return "", 0, []
    headers = []
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if colon and name.strip():
            headers.append((name.strip(), value.strip()))
    return first[0], int(first[1]), headers
