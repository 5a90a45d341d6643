"""A lean reader of a scratch kernel's IOPub messages.

jupyter_client's ``get_iopub_msg`` polls (a poller of its own per call), then receives, then
deserializes every part of every message, parsing the dates of its two headers. A tool call
reads four or more messages of which it needs the type, the parent's id and, for its own
messages, the content: this reader receives directly, checks the signature as jupyter_client
does, and unpacks the content only of the messages it is asked for.
"""

from __future__ import annotations

import asyncio
import hmac
from dataclasses import dataclass, field
from typing import Any

import zmq
import zmq.asyncio
from jupyter_client.session import DELIM, Session


@dataclass
class Execution:
    """What one execute_request produced."""

    stdout: str = ""
    stderr: str = ""
    outputs: list[dict[str, Any]] = field(default_factory=list)  # display/execute_result data
    error: str | None = None
    timed_out: bool = False
    died: bool = False


@dataclass
class KernelOutput:
    """What a running request shows as it goes: printed text, or a display (its MIME bundle)."""

    stream: str  # stdout | stderr | display
    text: str = ""
    data: dict[str, Any] | None = None
    display_id: str | None = None


def live_output(msg_type: str, content: dict[str, Any]) -> KernelOutput | None:
    """The output an IOPub message of a running request shows, if it shows one: ``stream``
    text, ``display_data`` and ``update_display_data`` (the final ``execute_result`` and an
    ``error`` come with the call's result)."""
    if msg_type == "stream":
        name = "stderr" if content.get("name") == "stderr" else "stdout"
        text = content.get("text")
        return KernelOutput(name, text) if isinstance(text, str) and text else None
    if msg_type in ("display_data", "update_display_data"):
        data = content.get("data")
        transient = content.get("transient")
        display_id = transient.get("display_id") if isinstance(transient, dict) else None
        if not isinstance(data, dict) or not data:
            return None
        return KernelOutput("display", data=data, display_id=str(display_id or "") or None)
    return None


@dataclass
class KernelMessage:
    """One IOPub message: its type, the id of the request it answers, its content."""

    msg_type: str
    parent_id: str | None
    content: dict[str, Any]


class IOPubReader:
    """Reads one kernel client's IOPub socket (the client's own channel stays unused)."""

    def __init__(self, socket: zmq.asyncio.Socket, session: Session) -> None:
        self.socket = socket
        self.session = session

    async def next(self, timeout: float, parent_id: str) -> KernelMessage | None:
        """The next message, None when none came within ``timeout`` seconds. The content of
        messages that answer another request than ``parent_id`` is left out (empty)."""
        try:  # a message already queued: no timer, no waiting future
            frames = await self.socket.recv_multipart(flags=zmq.NOBLOCK)
        except zmq.Again:
            try:
                frames = await asyncio.wait_for(self.socket.recv_multipart(), timeout)
            except asyncio.TimeoutError:
                return None
        return self.parse(frames, parent_id)

    def parse(self, frames: list[bytes], parent_id: str) -> KernelMessage:
        """Check the signature (as ``Session.deserialize`` does), then unpack what is needed."""
        parts = frames[frames.index(DELIM) + 1 :]
        if len(parts) < 5:
            raise ValueError("malformed kernel message: fewer than 5 parts")
        session = self.session
        if session.auth is not None:
            signature = parts[0]
            if not signature:
                raise ValueError("unsigned kernel message")
            if signature in session.digest_history:
                raise ValueError(f"duplicate signature: {signature!r}")
            session._add_digest(signature)
            if not hmac.compare_digest(signature, session.sign(parts[1:5])):
                raise ValueError(f"invalid signature: {signature!r}")
        header, parent = session.unpack(parts[1]), session.unpack(parts[2])
        own = parent.get("msg_id") == parent_id
        return KernelMessage(
            msg_type=header["msg_type"],
            parent_id=parent.get("msg_id"),
            content=session.unpack(parts[4]) if own else {},
        )


__all__ = ["IOPubReader", "KernelMessage", "KernelOutput", "live_output"]
