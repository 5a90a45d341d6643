"""The bridge inside a real ipykernel, driven through jupyter_client as the gateway does."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any
from unittest.mock import ANY

from jupyter_client.blocking.client import BlockingKernelClient

from kernel_tools.result import RESULT_MIME


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


def messages(client: BlockingKernelClient, code: str) -> list[tuple[str, dict[str, Any]]]:
    """Run ``code`` as the ``python`` tool does (not silent); its IOPub messages up to idle."""
    msg_id = client.execute(code, silent=False, store_history=True, allow_stdin=False)
    seen: list[tuple[str, dict[str, Any]]] = []
    while True:
        msg = client.get_iopub_msg(timeout=30)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        seen.append((msg["msg_type"], msg["content"]))
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            return seen


def test_installed_kernel_sends_what_the_gateway_reads_and_no_more(
    kernel: BlockingKernelClient, session: Path, server_root: Path
) -> None:
    before = [kind for kind, _ in messages(kernel, "1 + 1")]
    assert before == ["status", "execute_input", "execute_result", "status"]
    bootstrap = (
        "import kernel_tools.bridge as __resolve_bridge\n"
        f"__resolve_bridge.install(session_dir={str(session)!r}, "
        f"server_root={str(server_root)!r})\n"
        # installed twice (a restart bootstraps again): still wrapped once
        f"__resolve_bridge.install(session_dir={str(session)!r}, "
        f"server_root={str(server_root)!r})\n"
    )
    reply, _ = execute(kernel, bootstrap)
    assert reply["status"] == "ok", reply
    # No busy status, no execute_input: the result, then idle.
    assert messages(kernel, "1 + 1") == [
        ("execute_result", {"data": {"text/plain": "2"}, "metadata": {}, "execution_count": 2}),
        ("status", {"execution_state": "idle"}),
    ]
    # Formats the gateway drops are not made: no LaTeX, PDF or JavaScript repr of a result.
    rich = (
        "class Rich:\n"
        "    def _repr_html_(self): return '<b>r</b>'\n"
        "    def _repr_latex_(self): return '$r$'\n"
        "    def _repr_javascript_(self): return 'r()'\n"
        "Rich()"
    )
    assert messages(kernel, rich)[0][1]["data"] == {"text/plain": ANY, "text/html": "<b>r</b>"}
    # Every kind of output still comes, in order, before idle: text left unflushed at the end
    # of the cell, stderr, a display, an error.
    code = (
        "import sys\n"
        "from IPython.display import display\n"
        "print('out', end='')\n"
        "sys.stderr.write('err')\n"
        "display({'text/plain': 'shown'}, raw=True)\n"
        "print(' more', end='')\n"
        "raise ValueError('boom')\n"
    )
    seen = messages(kernel, code)
    kinds = [kind for kind, _ in seen]
    assert kinds[-2:] == ["error", "status"]
    text = {
        name: "".join(c["text"] for k, c in seen if k == "stream" and c["name"] == name)
        for name in ("stdout", "stderr")
    }
    assert text == {"stdout": "out more", "stderr": "err"}
    assert [c["data"] for k, c in seen if k == "display_data"] == [{"text/plain": "shown"}]
    assert seen[-2][1]["ename"] == "ValueError"
    # What changed, and that a second install did not wrap again.
    _, probed = execute(
        kernel,
        "import sys\n"
        "k = get_ipython().kernel\n"
        "display({'text/plain': repr((k._execute_sleep, sys.stdout.flush.skips_empty, "
        "sys.stdout.flush.__closure__[0].cell_contents.__name__, "
        "k._publish_status.__closure__[0].cell_contents.__name__))}, raw=True)",
    )
    assert probed == [{"text/plain": "(0.0, True, 'flush', '_publish_status')"}]
