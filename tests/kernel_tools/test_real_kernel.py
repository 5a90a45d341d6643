"""The bridge inside a real ipykernel, driven through jupyter_client as the gateway does."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jupyter_client.blocking.client import BlockingKernelClient
from jupyter_client.manager import KernelManager

from kernel_tools.result import RESULT_MIME

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def kernel(session: Path) -> Iterator[BlockingKernelClient]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": str(REPO),
        "HOME": str(session),
    }
    km = KernelManager(kernel_name="python3")
    km.start_kernel(cwd=str(session / "work"), env=env)
    client = km.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=60)
        yield client
    finally:
        client.stop_channels()
        km.shutdown_kernel(now=True)


def execute(client: BlockingKernelClient, code: str) -> tuple[dict[str, Any], list[Any]]:
    """Run ``code`` silently; its execute_reply and every display_data bundle it published."""
    msg_id = client.execute(code, silent=True, store_history=False)
    bundles: list[Any] = []
    while True:
        msg = client.get_iopub_msg(timeout=30)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] in ("display_data", "execute_result"):
            bundles.append(msg["content"]["data"])
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            break
    reply = client.get_shell_msg(timeout=30)
    return reply["content"], bundles


def bridge_call(client: BlockingKernelClient, name: str, arguments: Any) -> dict[str, Any]:
    payload = json.dumps({"name": name, "arguments": arguments, "timeout": 30})
    reply, bundles = execute(client, f"__resolve_bridge.call({payload!r})")
    assert reply["status"] == "ok"
    assert len(bundles) == 1 and list(bundles[0]) == [RESULT_MIME]
    result: dict[str, Any] = bundles[0][RESULT_MIME]
    return result


def test_bridge_in_a_real_kernel(
    kernel: BlockingKernelClient, session: Path, server_root: Path
) -> None:
    bootstrap = (
        "import kernel_tools.bridge as __resolve_bridge\n"
        f"__resolve_bridge.install(session_dir={str(session)!r}, "
        f"server_root={str(server_root)!r})\n"
    )
    reply, bundles = execute(kernel, bootstrap)
    assert reply["status"] == "ok", reply
    assert bundles == []
    written = bridge_call(kernel, "write_file", {"path": "k.txt", "content": "from kernel"})
    assert written == {"ok": True, "output": "wrote 11 bytes to k.txt", "mime": None}
    assert (session / "work" / "k.txt").read_text() == "from kernel"
    ran = bridge_call(kernel, "shell", {"command": "cat k.txt; echo; pwd"})
    assert ran["ok"]
    assert ran["output"].startswith(f"from kernel\n{os.path.realpath(session / 'work')}\n")
    refused = bridge_call(kernel, "write_file", {"path": "context/x", "content": ""})
    assert refused["ok"] is False and "read-only" in refused["output"]
    unknown = bridge_call(kernel, "nope", {})
    assert unknown["ok"] is False and "unknown tool 'nope'" in unknown["output"]
    broken_reply, broken = execute(kernel, "__resolve_bridge.call('{broken')")
    assert broken_reply["status"] == "ok"
    assert broken[0][RESULT_MIME]["ok"] is False
