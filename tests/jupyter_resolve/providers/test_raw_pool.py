"""The plain-HTTP path keeps connections alive between requests, and only when that is safe."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import pytest

from jupyter_resolve.providers.raw_http import ConnectionPool, RawHTTPError, raw_post

ANSWER = b"data: {}\n\n" * 3


@dataclass
class Server:
    """Answers each request on a connection with ``ANSWER`` (chunked), as ``mode`` says."""

    mode: str = "keep"  # keep | http10 | slow-tail | close-header | hang-up | hang-up-before | mute
    connections: int = 0
    requests: int = 0
    port: int = 0
    tasks: list[asyncio.Task[None]] = field(default_factory=list)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        task = asyncio.current_task()
        assert task is not None
        self.tasks.append(task)
        here = 0  # requests on this connection
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                await reader.readexactly(length)
                self.requests += 1
                here += 1
                if (self.mode == "hang-up-before" and here > 1) or self.mode == "mute":
                    break  # as if the server dropped the connection as it came: no answer
                extra = b"Connection: close\r\n" if self.mode == "close-header" else b""
                body = b"%x\r\n%s\r\n0\r\n\r\n" % (len(ANSWER), ANSWER)
                if self.mode == "http10":  # a 1.0 answer, the connection left open all the same
                    writer.write(
                        b"HTTP/1.0 200 OK\r\nContent-Length: %d\r\n\r\n" % len(ANSWER) + ANSWER
                    )
                    await writer.drain()
                    continue
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                    b"Transfer-Encoding: chunked\r\n" + extra + b"\r\n" + body[:20]
                )
                if self.mode == "slow-tail":  # the end of the answer comes in a later read
                    await writer.drain()
                    await asyncio.sleep(0.05)
                writer.write(body[20:])
                await writer.drain()
                if self.mode in ("close-header", "hang-up"):
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


@asynccontextmanager
async def serving(mode: str = "keep") -> AsyncIterator[Server]:
    state = Server(mode)
    listening = await asyncio.start_server(state.handle, "127.0.0.1", 0)
    state.port = listening.sockets[0].getsockname()[1]
    async with listening:
        try:
            yield state
        finally:
            for task in state.tasks:
                task.cancel()
            await asyncio.gather(*state.tasks, return_exceptions=True)


async def post(server: Server, pool: ConnectionPool, read_all: bool = True) -> bytes:
    response = await raw_post(
        f"http://127.0.0.1:{server.port}/v1/chat/completions",
        {"Authorization": "Bearer sk-test"},
        b"{}",
        connect_timeout=5,
        read_timeout=5,
        pool=pool,
    )
    body = b""
    try:
        async for piece in response.pieces():
            body += piece
            if not read_all:
                break
    finally:
        await response.aclose()
    return body


async def test_requests_one_after_another_share_a_connection() -> None:
    pool = ConnectionPool()
    async with serving() as server:
        assert [await post(server, pool) for _ in range(3)] == [ANSWER] * 3
        assert (server.connections, server.requests) == (1, 3)
    pool.close()


async def test_no_reuse_after_connection_close_an_http10_answer_or_an_answer_not_read_out() -> None:
    pool = ConnectionPool()
    async with serving("close-header") as server:
        assert await post(server, pool) == ANSWER
        assert await post(server, pool) == ANSWER
        assert server.connections == 2
        server.mode = "http10"  # HTTP/1.0 closes unless it says otherwise
        assert await post(server, pool) == ANSWER
        assert await post(server, pool) == ANSWER
        assert server.connections == 4
        server.mode = "slow-tail"
        await post(server, pool, read_all=False)  # the caller stopped before the end came
        assert await post(server, pool) == ANSWER
        assert server.connections == 6
    pool.close()


@pytest.mark.parametrize("mode", ["hang-up", "hang-up-before"])
async def test_a_connection_the_server_dropped_is_replaced_and_the_request_still_goes(
    mode: str,
) -> None:
    pool = ConnectionPool()
    async with serving(mode) as server:
        assert await post(server, pool) == ANSWER
        assert await post(server, pool) == ANSWER  # sent again on a new connection
        assert server.connections == 2
    pool.close()


async def test_a_new_connection_that_closes_without_an_answer_is_an_error() -> None:
    async with serving("mute") as server:
        with pytest.raises(RawHTTPError):
            await post(server, ConnectionPool())
        assert server.connections == 1  # not tried again: it was a connection of its own
