"""The bursts' client (bench/lean_client.py) against a real loopback server: a chunked
answer read piece by piece, a close-delimited one, a refusal, and an answer that is not HTTP."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from bench.lean_client import HTTPStatusError, stream_post


@asynccontextmanager
async def answering(answer: bytes) -> AsyncIterator[tuple[str, list[bytes]]]:
    """A server that reads one request (head and body) and writes ``answer``, then closes."""
    requests: list[bytes] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
        requests.append(head + await reader.readexactly(length))
        writer.write(answer)
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/resolve/api/chat?x=1", requests
    finally:
        server.close()
        await server.wait_closed()


async def collect(url: str) -> list[bytes]:
    return [p async for p in stream_post(url, {"Authorization": "token t"}, b'{"a":1}')]


async def test_a_chunked_answer_comes_piece_by_piece() -> None:
    answer = (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"6\r\nevent:\r\nb;ext=1\r\n data: {}\n\n\r\n0\r\n\r\n"
    )
    async with answering(answer) as (url, requests):
        assert await collect(url) == [b"event:", b" data: {}\n\n"]
    head = requests[0].decode()
    assert head.startswith("POST /resolve/api/chat?x=1 HTTP/1.1\r\n")
    assert "Authorization: token t\r\n" in head and head.endswith('\r\n\r\n{"a":1}')


async def test_an_answer_without_chunks_is_read_to_its_close() -> None:
    async with answering(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\ndata: 1\n\n") as (url, _):
        assert b"".join(await collect(url)) == b"data: 1\n\n"


async def test_a_refusal_raises_with_its_status_and_text() -> None:
    answer = b"HTTP/1.1 403 Forbidden\r\nContent-Length: 6\r\n\r\nno way"
    async with answering(answer) as (url, _):
        with pytest.raises(HTTPStatusError, match="HTTP 403: no way") as raised:
            await collect(url)
    assert raised.value.status == 403


@pytest.mark.parametrize(
    "chunks", [b"-1\r\n", b"zz\r\n", b"1ffffffff\r\n", b"2\r\nabc\r\n0\r\n\r\n"]
)
async def test_a_broken_chunked_coding_is_an_error(chunks: bytes) -> None:
    answer = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunks
    async with answering(answer) as (url, _):
        with pytest.raises(ValueError):
            await collect(url)


async def test_an_answer_that_is_not_http_is_an_error() -> None:
    async with answering(b"SSH-2.0-OpenSSH\r\n\r\n") as (url, _):
        with pytest.raises(ValueError, match="not an HTTP response"):
            await collect(url)
