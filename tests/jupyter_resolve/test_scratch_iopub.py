"""The gateway's own IOPub reader, over real zmq sockets with a real jupyter_client Session:
what it accepts is what ``Session.deserialize`` accepts."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest
import zmq
import zmq.asyncio
from jupyter_client.session import Session

from jupyter_resolve.scratch.iopub import IOPubReader

KEY = b"the-connection-key"


@contextlib.asynccontextmanager
async def connected() -> AsyncIterator[tuple[zmq.Socket[bytes], IOPubReader]]:
    """A kernel-side PUB socket and a reader on a SUB socket subscribed to everything."""
    context = zmq.asyncio.Context()
    pub: zmq.Socket[bytes] = zmq.Context.instance().socket(zmq.PUB)
    port = pub.bind_to_random_port("tcp://127.0.0.1")
    sub = context.socket(zmq.SUB)
    sub.setsockopt(zmq.SUBSCRIBE, b"")
    sub.connect(f"tcp://127.0.0.1:{port}")
    reader = IOPubReader(sub, Session(key=KEY))
    try:
        # A slow joiner: publish until the subscription is in place.
        kernel = Session(key=KEY)
        while True:
            kernel.send(pub, "status", {"execution_state": "starting"})
            if await reader.next(0.05, "none") is not None:
                break
        while await reader.next(0.1, "none") is not None:
            pass  # a late copy of an earlier one
        yield pub, reader
    finally:
        sub.close(linger=0)
        pub.close(linger=0)
        context.term()


def request(session: Session) -> dict[str, Any]:
    return session.msg("execute_request", {"code": "1 + 1"})


async def test_a_message_of_the_call_comes_whole_others_without_content() -> None:
    async with connected() as (pub, reader):
        kernel = Session(key=KEY)
        mine, other = request(kernel), request(kernel)
        kernel.send(pub, "execute_result", {"data": {"text/plain": "2"}}, parent=mine)
        kernel.send(pub, "stream", {"name": "stdout", "text": "not mine"}, parent=other)
        kernel.send(pub, "status", {"execution_state": "idle"}, parent=mine)
        msg_id = mine["header"]["msg_id"]
        first = await reader.next(5, msg_id)
        assert first is not None
        assert (first.msg_type, first.parent_id, first.content) == (
            "execute_result",
            msg_id,
            {"data": {"text/plain": "2"}},
        )
        second = await reader.next(5, msg_id)
        assert second is not None
        assert (second.msg_type, second.parent_id, second.content) == (
            "stream",
            other["header"]["msg_id"],
            {},
        )
        third = await reader.next(5, msg_id)
        assert third is not None and third.content == {"execution_state": "idle"}


async def test_nothing_sent_is_none() -> None:
    async with connected() as (_, reader):
        assert await reader.next(0.05, "any") is None


async def test_a_forged_or_replayed_message_is_refused() -> None:
    async with connected() as (pub, reader):
        parent = request(Session(key=KEY))
        msg_id = parent["header"]["msg_id"]
        Session(key=b"another-key").send(pub, "status", {"execution_state": "idle"}, parent=parent)
        with pytest.raises(ValueError, match="invalid signature"):
            await reader.next(5, msg_id)
        unsigned = Session(key=b"")
        unsigned.send(pub, "status", {"execution_state": "idle"}, parent=parent)
        with pytest.raises(ValueError, match="unsigned"):
            await reader.next(5, msg_id)
        kernel = Session(key=KEY)
        message = kernel.msg("status", {"execution_state": "idle"}, parent=parent)
        frames = kernel.serialize(message)
        pub.send_multipart(frames)
        pub.send_multipart(frames)
        accepted = await reader.next(5, msg_id)
        assert accepted is not None and accepted.content == {"execution_state": "idle"}
        with pytest.raises(ValueError, match="duplicate signature"):
            await reader.next(5, msg_id)


async def test_a_wait_cancelled_leaves_the_reader_usable() -> None:
    async with connected() as (pub, reader):
        waiting = asyncio.ensure_future(reader.next(30, "x"))
        await asyncio.sleep(0)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        kernel = Session(key=KEY)
        parent = request(kernel)
        kernel.send(pub, "status", {"execution_state": "idle"}, parent=parent)
        got = await reader.next(5, parent["header"]["msg_id"])
        assert got is not None and got.msg_type == "status"
