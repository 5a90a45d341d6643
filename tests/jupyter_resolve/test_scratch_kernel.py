"""A scratch kernel driven directly (a real ipykernel with the bridge installed), for what the
chain cannot show: where a bridge call ends."""

from __future__ import annotations

import logging
from pathlib import Path

from jupyter_resolve.scratch.kernels import ScratchKernel
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
