"""The gateway's end of a scratch kernel's direct channel (kernel_tools/direct.py).

Tool calls go to the kernel's main thread in one hop instead of through ipykernel's shell
channel; their outputs come back on IOPub as a cell's do, so the caller reads them as before.
Only a kernel launched on this machine is asked to open one (a socket bound in a pod elsewhere
could not be reached); a kernel that cannot (another ipykernel) keeps to the shell channel.
"""

from __future__ import annotations

from typing import Any

import zmq

from kernel_tools.direct import BRIDGE_REQUEST, PYTHON_REQUEST  # the kernel's end's names


def bind_address(transport: str, ip: str) -> str:
    """Where the kernel binds: beside its own sockets (in the sandbox's private socket folder
    when it has IPC ones), else a random loopback port."""
    if transport == "ipc":
        return f"ipc://{ip}-resolve-direct"
    return "tcp://127.0.0.1"


def open_cell(bind: str) -> str:
    """The silent cell that opens the channel and prints its address (nothing when it cannot)."""
    return f"print(__resolve_bridge.open_direct({bind!r}))\n"


def address_from(stdout: str, bind: str) -> str | None:
    """The address the cell printed, if it is one the kernel was asked to bind."""
    address = stdout.strip()
    if bind.startswith("tcp://"):
        port = address.removeprefix(bind + ":")
        return address if address.startswith(bind + ":") and port.isdigit() else None
    return address if address == bind else None


class DirectChannel:
    """Requests to one kernel, signed with its session key as shell messages are."""

    def __init__(self, session: Any, address: str) -> None:
        self.session = session
        self.address = address
        # A plain socket, not an asyncio one: a DEALER's send never waits (the queue takes it),
        # and the asyncio wrapper costs more than the send.
        self.socket: zmq.Socket[bytes] = zmq.Context.instance().socket(zmq.DEALER)
        self.socket.setsockopt(zmq.LINGER, 0)
        self.socket.connect(address)

    def send_python(self, code: str) -> str:
        """Send ``code`` to run as a cell; the request's id (the parent of its outputs)."""
        return self._send(PYTHON_REQUEST, {"code": code})

    def send_bridge(self, request: str) -> str:
        """Send a ``bridge.call`` request; the request's id."""
        return self._send(BRIDGE_REQUEST, {"request": request})

    def _send(self, msg_type: str, content: dict[str, Any]) -> str:
        message = self.session.send(self.socket, msg_type, content)
        return str(message["header"]["msg_id"])

    def close(self) -> None:
        self.socket.close(linger=0)


__all__ = ["DirectChannel", "address_from", "bind_address", "open_cell"]
