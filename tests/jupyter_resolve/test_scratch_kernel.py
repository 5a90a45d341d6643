"""A scratch kernel driven directly (a real ipykernel with the bridge installed), for what the
chain cannot show: where a bridge call ends, which channel a call takes."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from jupyter_resolve.scratch.iopub import KernelOutput
from jupyter_resolve.scratch.kernels import ScratchKernel
from jupyter_resolve.scratch.sandbox import bwrap_available
from jupyter_resolve.scratch.workspace import Workspace
from jupyter_resolve.tools.kernel import python_result

# After publishing its result, the bridge waits for a file that is only written once the
# gateway has the result: a call that waited for the kernel to be idle would never end.
HOLD_AFTER_PUBLISHING = """
import os, time
import kernel_tools.bridge as bridge
published = bridge.publish
def publish_then_hold(payload):
    published(payload)
    while not os.path.exists("go"):
        time.sleep(0.01)
    bridge.publish = published
bridge.publish = publish_then_hold
"""


async def test_a_bridge_call_ends_at_its_result_while_the_cell_goes_on(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    workspace = Workspace(root / ".resolve" / "sessions" / "s1")
    kernel = ScratchKernel(workspace, root, logging.getLogger("test"), sandbox="")
    await kernel.start()
    try:
        assert python_result(await kernel.execute(HOLD_AFTER_PUBLISHING, 30), 30).ok
        (workspace.work / "note.txt").write_text("hello")
        answer = await kernel.bridge_call("read_file", {"path": "note.txt"}, timeout=5)
        assert isinstance(answer, dict), answer
        assert answer["ok"] is True and "hello" in answer["output"]
        (workspace.work / "go").touch()
        # The rest of that cell ran first; the kernel is the same, its state kept.
        after = python_result(await kernel.execute("bridge.publish is published", 30), 30)
        assert (after.ok, after.output) == (True, "True")
        assert kernel.restarts == 0
    finally:
        await kernel.shutdown()


# Counts the execute_requests that reach the kernel's shell handler from now on.
COUNT_SHELL_REQUESTS = """
__shell_requests = []
def __count(handler):
    async def counted(stream, ident, parent):
        __shell_requests.append(1)
        return await handler(stream, ident, parent)
    return counted
__k = get_ipython().kernel
__k.shell_handlers["execute_request"] = __count(__k.shell_handlers["execute_request"])
"""


@pytest.mark.parametrize("sandbox", ["", "bwrap"])
async def test_tool_calls_take_the_direct_channel_and_time_out_there(
    tmp_path: Path, sandbox: str
) -> None:
    if sandbox and not bwrap_available():
        pytest.skip("bubblewrap cannot create namespaces on this machine")
    root = tmp_path / "root"
    root.mkdir()
    workspace = Workspace(root / ".resolve" / "sessions" / "s1")
    kernel = ScratchKernel(workspace, root, logging.getLogger("test"), sandbox=sandbox)
    await kernel.start()
    try:
        assert kernel.direct is not None
        # IPC beside the kernel's own sockets in the sandbox, loopback TCP without it
        assert kernel.direct.address.startswith("ipc://" if sandbox else "tcp://127.0.0.1:")
        assert not (await kernel.execute(COUNT_SHELL_REQUESTS, 30, silent=True)).error
        (workspace.work / "note.txt").write_text("hello")
        assert python_result(await kernel.execute("x = 41", 30), 30).ok
        answer = await kernel.bridge_call("read_file", {"path": "note.txt"}, timeout=5)
        assert isinstance(answer, dict) and "hello" in answer["output"]
        slow = await kernel.execute("import time; time.sleep(60)", 1)
        assert slow.timed_out and not slow.died
        # Interrupted in time (the sandbox's interrupts are messages), not restarted.
        after = python_result(await kernel.execute("(x + 1, len(__shell_requests))", 30), 30)
        assert (after.ok, after.output) == (True, "(42, 0)")
        assert kernel.restarts == 0
    finally:
        await kernel.shutdown()


# Prints, then waits for a file that the gateway's output callback writes on seeing that line:
# "go seen" means the line reached the gateway while the code still ran.
WAITS_FOR_GO = (
    "import os, time\n"
    "print('waiting', flush=True)\n"
    "for _ in range(400):\n"
    "    if os.path.exists('go'): break\n"
    "    time.sleep(0.05)\n"
    "print('go seen' if os.path.exists('go') else 'gave up')\n"
)
SHELL_WAITS_FOR_GO = (
    "echo waiting; for i in $(seq 400); do [ -e go ] && break; sleep 0.05; done; "
    "if [ -e go ]; then echo go seen; else echo gave up; fi"
)


@pytest.mark.parametrize("channel", ["direct", "shell"])
async def test_output_comes_while_a_call_runs_on_either_channel(
    tmp_path: Path, channel: str
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    workspace = Workspace(root / ".resolve" / "sessions" / "s1")
    kernel = ScratchKernel(workspace, root, logging.getLogger("test"), sandbox="")
    await kernel.start()
    if channel == "shell" and kernel.direct is not None:  # as a kernel elsewhere is reached
        kernel.direct.close()
        kernel.direct = None
    seen: list[KernelOutput] = []

    def on_output(output: KernelOutput) -> None:
        seen.append(output)
        if "waiting" in output.text:
            (workspace.work / "go").touch()

    try:
        result = await kernel.execute(WAITS_FOR_GO, 30, on_output=on_output)
        assert result.stdout == "waiting\ngo seen\n"
        assert "".join(o.text for o in seen) == result.stdout
        assert {o.stream for o in seen} == {"stdout"}
        (workspace.work / "go").unlink()
        seen.clear()
        answer = await kernel.bridge_call(
            "shell", {"command": SHELL_WAITS_FOR_GO}, 30, on_output=on_output
        )
        assert isinstance(answer, dict) and answer["output"].startswith("waiting\ngo seen\n")
        assert "".join(o.text for o in seen) == "waiting\ngo seen\n"
    finally:
        await kernel.shutdown()


def test_the_gateway_takes_only_the_address_it_asked_for() -> None:
    from jupyter_resolve.scratch.direct import address_from, bind_address

    tcp, ipc = bind_address("tcp", "0.0.0.0"), bind_address("ipc", "/tmp/resolve-ipc-x/k")
    assert tcp == "tcp://127.0.0.1"  # loopback, whatever the kernel's own ip
    assert address_from("tcp://127.0.0.1:4242\n", tcp) == "tcp://127.0.0.1:4242"
    assert address_from(f"{ipc}\n", ipc) == ipc
    for printed in ("", "tcp://127.0.0.1:", "tcp://127.0.0.1:42x", "tcp://127.0.0.10:42"):
        assert address_from(printed, tcp) is None, printed
    assert address_from(f"{ipc}-other", ipc) is None
    assert address_from("ipc:///elsewhere", ipc) is None
