"""The direct channel inside a real ipykernel: requests signed with the kernel's key run on its
main thread past the shell channel, their outputs on IOPub as a cell's; anything else runs
nothing."""

from __future__ import annotations

import json
import queue
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import zmq
from jupyter_client.blocking.client import BlockingKernelClient
from jupyter_client.session import Session

from kernel_tools.direct import BRIDGE_REQUEST, PYTHON_REQUEST
from kernel_tools.result import RESULT_MIME

from .test_real_kernel import execute

# Counts the execute_requests that reach the kernel's shell handler from now on.
COUNT_SHELL_REQUESTS = """
__shell_requests = []
def __count(handler):
    async def counted(stream, ident, parent):
        __shell_requests.append(parent["header"]["msg_id"])
        return await handler(stream, ident, parent)
    return counted
__k = get_ipython().kernel
__k.shell_handlers["execute_request"] = __count(__k.shell_handlers["execute_request"])
"""


@pytest.fixture
def channel(
    kernel: BlockingKernelClient, session: Path, server_root: Path
) -> Iterator[zmq.Socket[bytes]]:
    """A DEALER connected to the direct channel the bridge opened in ``kernel``."""
    reply, bundles = execute(
        kernel,
        "import kernel_tools.bridge as __resolve_bridge\n"
        f"__resolve_bridge.install(session_dir={str(session)!r}, "
        f"server_root={str(server_root)!r})\n"
        "display({'text/plain': __resolve_bridge.open_direct('tcp://127.0.0.1')}, raw=True)\n"
        + COUNT_SHELL_REQUESTS,
    )
    assert reply["status"] == "ok", reply
    address = bundles[0]["text/plain"]
    assert address.startswith("tcp://127.0.0.1:")
    socket: zmq.Socket[bytes] = zmq.Context.instance().socket(zmq.DEALER)
    socket.setsockopt(zmq.LINGER, 0)
    socket.connect(address)
    yield socket
    socket.close()


def outputs(client: BlockingKernelClient, msg_id: str, wait: float = 30) -> list[tuple[str, Any]]:
    """(type, content) of what IOPub sends for ``msg_id``, up to its idle status; [] when nothing
    for it comes within ``wait`` seconds."""
    seen: list[tuple[str, Any]] = []
    while True:
        try:
            msg = client.get_iopub_msg(timeout=wait)
        except queue.Empty:
            return seen
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        seen.append((msg["msg_type"], msg["content"]))
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            return seen


def send(socket: zmq.Socket[bytes], session: Session, msg_type: str, content: Any) -> str:
    return str(session.send(socket, msg_type, content)["header"]["msg_id"])


def python(client: BlockingKernelClient, socket: zmq.Socket[bytes], code: str) -> list[Any]:
    return outputs(client, send(socket, client.session, PYTHON_REQUEST, {"code": code}))


def test_python_runs_as_a_cell_past_the_shell_channel(
    kernel: BlockingKernelClient, channel: zmq.Socket[bytes]
) -> None:
    seen = python(kernel, channel, "print('out'); x = 41\nx + 1")
    assert seen == [
        ("stream", {"name": "stdout", "text": "out\n"}),
        ("execute_result", {"data": {"text/plain": "42"}, "metadata": {}, "execution_count": 1}),
        ("status", {"execution_state": "idle"}),
    ]
    # A cell's ways: history (_), magics, top-level await, no stdin, errors with their traceback.
    assert python(kernel, channel, "_ + 1")[0][1]["data"] == {"text/plain": "43"}
    assert python(kernel, channel, "%load_ext autoreload")[-1][0] == "status"
    awaited = python(kernel, channel, "import asyncio\nawait asyncio.sleep(0)\n'awaited'")
    assert awaited[0][1]["data"] == {"text/plain": "'awaited'"}
    refused = python(kernel, channel, "input('?')")
    assert refused[0][0] == "error" and refused[0][1]["ename"] == "StdinNotImplementedError"
    failed = python(kernel, channel, "1 / 0")
    assert [kind for kind, _ in failed] == ["error", "status"]
    assert failed[0][1]["ename"] == "ZeroDivisionError" and failed[0][1]["traceback"]
    # None of it went through the shell: no execute_request handled, no execute_reply sent.
    assert python(kernel, channel, "len(__shell_requests)")[0][1]["data"] == {"text/plain": "0"}
    with pytest.raises(queue.Empty):
        kernel.get_shell_msg(timeout=0.2)


def test_a_bridge_request_publishes_its_one_result(
    kernel: BlockingKernelClient, channel: zmq.Socket[bytes], work: Path
) -> None:
    (work / "note.txt").write_text("from the gateway")
    request = json.dumps({"name": "read_file", "arguments": {"path": "note.txt"}, "timeout": 30})
    seen = outputs(kernel, send(channel, kernel.session, BRIDGE_REQUEST, {"request": request}))
    assert [kind for kind, _ in seen] == ["display_data", "status"]
    result = seen[0][1]["data"][RESULT_MIME]
    assert result["ok"] is True and "from the gateway" in result["output"]
    bad = outputs(kernel, send(channel, kernel.session, BRIDGE_REQUEST, {"request": "[1"}))
    assert bad[0][1]["data"][RESULT_MIME]["ok"] is False  # an error result, the kernel fine


def test_a_request_not_signed_with_the_kernels_key_runs_nothing(
    kernel: BlockingKernelClient, channel: zmq.Socket[bytes]
) -> None:
    python(kernel, channel, "hits = []")
    stranger = Session(key=b"not-the-kernels-key")
    ignored = send(channel, stranger, PYTHON_REQUEST, {"code": "hits.append('stranger')"})
    unsigned = Session(key=b"")
    ignored_too = send(channel, unsigned, PYTHON_REQUEST, {"code": "hits.append('unsigned')"})
    # Replayed: the same signed frames twice run once.
    signed = kernel.session.serialize(
        kernel.session.msg(PYTHON_REQUEST, {"code": "hits.append('signed')"})
    )
    channel.send_multipart(signed)
    channel.send_multipart(signed)
    channel.send_multipart([b"<IDS|MSG>", b"garbage"])  # malformed: dropped
    assert outputs(kernel, ignored, wait=0.5) == []
    assert outputs(kernel, ignored_too, wait=0.5) == []
    shown = python(kernel, channel, "hits")
    assert shown[0][1]["data"] == {"text/plain": "['signed']"}


def test_an_interrupt_ends_a_direct_cell_and_keeps_the_kernel(
    kernel: BlockingKernelClient, channel: zmq.Socket[bytes]
) -> None:
    python(kernel, channel, "kept = 'state'")
    msg_id = send(channel, kernel.session, PYTHON_REQUEST, {"code": "import time; time.sleep(60)"})
    started = outputs(kernel, msg_id, wait=1)  # still running: nothing for it yet
    assert started == []
    kernel.parent.interrupt_kernel()  # type: ignore[union-attr]
    seen = outputs(kernel, msg_id)
    assert seen[0][0] == "error" and seen[0][1]["ename"] == "KeyboardInterrupt"
    assert seen[-1] == ("status", {"execution_state": "idle"})
    assert python(kernel, channel, "kept")[0][1]["data"] == {"text/plain": "'state'"}


def open_direct(client: BlockingKernelClient, bind: str) -> str:
    reply, bundles = execute(
        client, f"display({{'text/plain': __resolve_bridge.open_direct({bind!r})}}, raw=True)"
    )
    assert reply["status"] == "ok", reply
    return str(bundles[0]["text/plain"])


def dealer(address: str) -> zmq.Socket[bytes]:
    socket: zmq.Socket[bytes] = zmq.Context.instance().socket(zmq.DEALER)
    socket.setsockopt(zmq.LINGER, 0)
    socket.connect(address)
    return socket


def test_opened_again_only_the_newest_channel_serves(
    kernel: BlockingKernelClient, channel: zmq.Socket[bytes], tmp_path: Path
) -> None:
    newest = dealer(open_direct(kernel, "tcp://127.0.0.1"))
    try:
        old = send(channel, kernel.session, PYTHON_REQUEST, {"code": "'old'"})
        assert outputs(kernel, old, wait=1) == []  # the first channel is closed
        assert python(kernel, newest, "'new'")[0][1]["data"] == {"text/plain": "'new'"}
        # A bind that fails opens nothing (and the channel it was to replace is closed).
        assert open_direct(kernel, f"ipc://{tmp_path}/no/such/folder/s") == ""
        gone = send(newest, kernel.session, PYTHON_REQUEST, {"code": "'gone'"})
        assert outputs(kernel, gone, wait=1) == []
    finally:
        newest.close()
