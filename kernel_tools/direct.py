"""The direct channel: the gateway's tool calls reach the kernel's main thread in one hop.

A shell-channel ``execute_request`` crosses ipykernel's shell-channel thread, waits for the main
thread, builds and sends an ``execute_reply`` nobody reads and prepares a cell in ways a tool
call does not need; on a slow machine that is most of a ``python`` call's time. The bridge can
instead open a ROUTER socket of its own, served on the main thread's event loop, for two kinds
of request signed with the kernel's own key (checked as the shell channel checks them):

- ``resolve_python_request`` ``{"code": str}``: ``code`` runs as a cell runs (transformed,
  magics and all, ``Out`` and ``_`` kept, post-execute hooks such as inline plots run);
- ``resolve_bridge_request`` ``{"request": str}``: what ``bridge.call`` takes.

The outputs go out on IOPub as a cell's do, with the request as their parent, and then an
``idle`` status, so the gateway reads a call the same way whichever way it was sent. Requests are
served one at a time and never at the same time as a shell-channel cell (the kernel's own lock).
A kernel that does not have the parts this needs (another ipykernel) opens no channel, and the
gateway keeps to the shell channel.
"""

from __future__ import annotations

import asyncio
import hmac
import sys
from typing import Any

PYTHON_REQUEST = "resolve_python_request"
BRIDGE_REQUEST = "resolve_bridge_request"
NEEDED = (
    "session",
    "shell",
    "set_parent",
    "pre_handler_hook",
    "post_handler_hook",
    "_publish_status",
    "_forward_input",
    "_restore_input",
    "_main_asyncio_lock",
)

_serving: tuple[asyncio.Task[None], Any] | None = None  # the task and its socket


def open_channel(bind: str) -> str:
    """Bind ``bind`` (``tcp://127.0.0.1`` for a random port, or an ``ipc://`` path) and serve it;
    the address to connect to, or ``""`` when this kernel cannot serve one."""
    global _serving
    ipython = sys.modules.get("IPython")
    kernel = getattr(ipython.get_ipython() if ipython else None, "kernel", None)
    if kernel is None or not all(hasattr(kernel, name) for name in NEEDED):
        return ""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return ""
    import zmq
    import zmq.asyncio

    if _serving is not None:  # opened again: the newest channel serves, the old one is closed
        _serving[0].cancel()
        _serving[1].close(linger=0)
        _serving = None
    context = zmq.asyncio.Context(zmq.Context.instance())  # a shadow: no second I/O thread
    socket = context.socket(zmq.ROUTER)
    socket.linger = 0
    try:
        if bind.startswith("tcp://"):
            address = f"{bind}:{socket.bind_to_random_port(bind)}"
        else:
            socket.bind(bind)
            address = bind
    except zmq.ZMQError:
        socket.close(linger=0)
        return ""
    _serving = (loop.create_task(_serve(kernel, socket)), socket)
    return address


async def _serve(kernel: Any, socket: Any) -> None:
    while True:
        frames = await socket.recv_multipart()
        message = parse(kernel.session, [bytes(frame) for frame in frames])
        if message is None:
            continue
        async with kernel._main_asyncio_lock:
            try:
                await _handle(kernel, message)
            except Exception as exc:  # the kernel's parts failed us: say so, keep serving
                print(f"resolve direct channel: {type(exc).__name__}: {exc}", file=sys.__stderr__)


def parse(session: Any, frames: list[bytes]) -> dict[str, Any] | None:
    """A request checked as ``Session.deserialize`` checks one (signed with the key, never
    replayed), without parsing dates nobody reads; None for anything else."""
    try:
        parts = frames[frames.index(b"<IDS|MSG>") + 1 :]
        if len(parts) < 5:
            return None
        if session.auth is not None:
            signature = parts[0]
            if not signature or signature in session.digest_history:
                return None
            if not hmac.compare_digest(signature, session.sign(parts[1:5])):
                return None
            session._add_digest(signature)
        header = session.unpack(parts[1])
        if header.get("msg_type") not in (PYTHON_REQUEST, BRIDGE_REQUEST):
            return None
        content = session.unpack(parts[4])
        if not isinstance(content, dict):
            return None
        return {"header": header, "parent_header": {}, "metadata": {}, "content": content}
    except Exception:  # malformed: not a request of the gateway's
        return None


async def _handle(kernel: Any, message: dict[str, Any]) -> None:
    """Run one request as ipykernel runs a shell message: its parent set, interrupts raised
    (ignored while idle), no stdin, output streams flushed, then ``idle``."""
    kernel.set_parent([], message, channel="shell")
    kernel.pre_handler_hook()
    kernel._forward_input(False)
    try:
        content = message["content"]
        if message["header"]["msg_type"] == PYTHON_REQUEST:
            await _run_cell(kernel, str(content.get("code", "")))
        else:
            from . import bridge

            bridge.call(str(content.get("request", "")))
    except KeyboardInterrupt:  # between the cell's lines and ours: the call still ends
        pass
    except Exception as exc:  # never the kernel's end: the error is the call's output
        print(f"resolve direct channel: {type(exc).__name__}: {exc}", file=sys.stderr)
    finally:
        kernel._restore_input()
        kernel.post_handler_hook()
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
        kernel._publish_status("idle", "shell")


async def _run_cell(kernel: Any, code: str) -> None:
    """``code`` as ipykernel's ``do_execute`` runs a cell with history kept: an async cell is
    awaited (an interrupt cancels it), any other is stepped through at once."""
    shell = kernel.shell
    error = None
    try:
        transformed = shell.transform_cell(code)
    except Exception:
        transformed, error = code, sys.exc_info()
    result = None
    cell = shell.run_cell_async(
        code, store_history=True, transformed_cell=transformed, preprocessing_exc_tuple=error
    )
    try:
        awaited = shell.should_run_async(
            code, transformed_cell=transformed, preprocessing_exc_tuple=error
        )
        if awaited:
            result = await _await_cell(kernel, asyncio.ensure_future(cell))
        else:
            try:
                cell.send(None)
            except StopIteration as done:
                result = done.value
            else:  # cannot be: a cell that is not async never waits
                cell.close()
                raise RuntimeError("a cell that is not async waited")
    finally:
        shell.events.trigger("post_execute")
        shell.events.trigger("post_run_cell", result)


async def _await_cell(kernel: Any, future: asyncio.Future[Any]) -> Any:
    cancel_on_sigint = getattr(kernel, "_cancel_on_sigint", None)
    try:
        if cancel_on_sigint is None:
            return await future
        with cancel_on_sigint(future):
            return await future
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if task is not None and getattr(task, "cancelling", lambda: 0)():
            raise  # the channel itself is closing
        print("KeyboardInterrupt: the cell was interrupted", file=sys.stderr)
        return None
