"""The magics against a real ``jupyter server``: in terminal IPython (Markdown), in a kernel the
server started (inherited connection, scoped token), and interrupted mid-run (cancelled)."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from jupyter_client.blocking import BlockingKernelClient
from jupyter_client.manager import KernelManager

from tests.jupyter_resolve.magics.server import RunningServer, running_server

FENCE = "```"


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    with running_server(tmp_path_factory.mktemp("live"), base_url="/hub/user/ada/") as server:
        yield server


@pytest.fixture(scope="module")
def scripted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RunningServer, Path]]:
    """A server on the scripted model replaying ``script`` (re-read whenever it changes).

    tool_timeout only bounds how long a scratch kernel sleeps on after a cancel (it keeps the
    server's shutdown short); a cancelled run itself must end at once."""
    tmp = tmp_path_factory.mktemp("scripted")
    script = tmp / "script.jsonl"
    script.write_text(json.dumps({"content": "nothing scripted yet"}) + "\n")
    args = (f"--Resolve.script={script}", "--Resolve.tool_timeout=8")
    with running_server(tmp / "server", *args, "--Resolve.approval_timeout=30") as server:
        yield server, script


def write_script(script: Path, *turns: dict[str, Any]) -> None:
    script.write_text("".join(json.dumps(turn) + "\n" for turn in turns))


@contextlib.contextmanager
def kernel(
    server: RunningServer, cwd: Path
) -> Iterator[tuple[KernelManager, BlockingKernelClient]]:
    """A kernel the test starts itself, with the connection set by hand."""
    km = KernelManager(kernel_name="python3")
    km.start_kernel(env=server.kernel_env(), cwd=str(cwd))
    kc = km.blocking_client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=60)
        assert collect(kc, "%load_ext jupyter_resolve")[0] == "ok"
        yield km, kc
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def reply_to(kc: BlockingKernelClient, msg_id: str) -> dict[str, Any]:
    while True:
        reply: dict[str, Any] = kc.get_shell_msg(timeout=60)
        if reply["parent_header"].get("msg_id") == msg_id:
            return reply


def ipython(script: str, env: dict[str, str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "script.ipy"
    path.write_text(script)
    return subprocess.run(
        [sys.executable, "-m", "IPython", "--no-banner", "--colors=nocolor", str(path)],
        env={**env, "IPYTHONDIR": str(tmp_path / "ipython")},
        capture_output=True,
        text=True,
        timeout=90,
        cwd=tmp_path,
    )


def test_terminal_ipython_prints_markdown(live: RunningServer, tmp_path: Path) -> None:
    script = f"""\
%load_ext jupyter_resolve
%resolve status
n = 6
cell = "Run this:\\n{FENCE}python\\nprint({{n}} * 7)\\n{FENCE}"
get_ipython().run_cell_magic("resolve", "", cell)
print("RESULT", _resolve.reason, _resolve.tool_calls[0]["output"], _resolve.session_id)
first_session = _resolve.session_id
%resolve hello again
print("SAME SESSION", _resolve.session_id == first_session)
%resolve --new hello anew
print("NEW SESSION", _resolve.session_id != first_session)
%resolve replay {{_resolve.run_id}}
print("REPLAYED", _resolve.reason, len(_resolve.events))
%resolve runs
"""
    done = ipython(script, live.kernel_env(), tmp_path)
    out = done.stdout
    assert done.returncode == 0, done.stderr + out
    assert f"**jupyter-resolve** 0.1.0 at {live.url} — ok" in out
    assert "**🔧 python**\n```python\nprint(6 * 7)\n```\n→ done in" in out
    assert "RESULT stop 42 session-" in out
    assert "(offline scripted model) The code ran" in out
    assert "of 8 rounds ·" in out and "tokens ·" in out
    assert "SAME SESSION True" in out and "NEW SESSION True" in out
    assert "REPLAYED stop" in out
    # the runs table says what each run was asked
    assert "| run | session | started | state | asked |" in out
    assert "| stop | hello anew |" in out


def test_terminal_ipython_says_what_to_set(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER_RESOLVE_")}
    env = {k: v for k, v in env.items() if not k.startswith("JUPYTERHUB_")}
    done = ipython("%load_ext jupyter_resolve\n%resolve hi\n", env, tmp_path)
    assert "UsageError" in done.stdout + done.stderr
    assert "set JUPYTER_RESOLVE_URL and JUPYTER_RESOLVE_TOKEN" in done.stdout + done.stderr


def test_terminal_ipython_reports_a_refused_token(live: RunningServer, tmp_path: Path) -> None:
    env = {**live.kernel_env(), "JUPYTER_RESOLVE_TOKEN": "wrong"}
    done = ipython("%load_ext jupyter_resolve\n%resolve hi\n", env, tmp_path)
    text = done.stdout + done.stderr
    assert "answered 403" in text and "was not accepted" in text


def collect(kc: BlockingKernelClient, code: str, timeout: float = 90) -> tuple[str, list[Any]]:
    """Run ``code``; its status and every iopub message's content."""
    messages: list[Any] = []
    reply = kc.execute_interactive(
        code, timeout=timeout, output_hook=lambda m: messages.append(m["content"])
    )
    return reply["content"]["status"], messages


def texts(messages: list[Any]) -> str:
    parts = []
    for content in messages:
        parts.append(content.get("text", ""))
        parts.append(content.get("data", {}).get("text/plain", ""))
    return "\n".join(parts)


def test_kernel_started_by_the_server_connects_with_its_scoped_token(
    live: RunningServer,
) -> None:
    headers = {"Authorization": f"token {live.token}"}
    started = httpx.post(f"{live.url}api/kernels", headers=headers, json={}, trust_env=False)
    assert started.status_code == 201, started.text
    kernel_id = started.json()["id"]
    kc = BlockingKernelClient()
    kc.load_connection_file(str(live.runtime_dir / f"kernel-{kernel_id}.json"))
    # No heartbeat: without a manager, a heartbeat not yet seen reads as a dead kernel.
    kc.start_channels(hb=False)
    try:
        kc.wait_for_ready(timeout=60)
        code = f"""\
import os, httpx
%load_ext jupyter_resolve
url, token = os.environ["JUPYTER_RESOLVE_URL"], os.environ["JUPYTER_RESOLVE_TOKEN"]
print("URL", url)
print("OWN TOKEN", token != {live.token!r})
bare = httpx.get(url + "api/kernels", headers={{"Authorization": "token " + token}})
print("KERNELS API", bare.status_code)
"""
        status, messages = collect(kc, code)
        out = texts(messages)
        assert status == "ok", out
        assert f"URL {live.url}" in out
        assert "OWN TOKEN True" in out and "KERNELS API 403" in out
        cell = (
            "%%resolve\nRun this:\n"
            f"{FENCE}python\nimport os\nprint('SCRATCH', os.environ.get('JUPYTER_RESOLVE_TOKEN'))"
            f"\n{FENCE}"
        )
        status, messages = collect(kc, cell)
        assert status == "ok", texts(messages)
        views = [
            m for m in messages if "application/vnd.jupyter.widget-view+json" in m.get("data", {})
        ]
        assert views, "the run is shown as a widget"
        status, messages = collect(kc, "print(_resolve.reason, _resolve.tool_calls[0]['output'])")
        assert "stop SCRATCH None" in texts(messages)
    finally:
        kc.stop_channels()
        httpx.delete(f"{live.url}api/kernels/{kernel_id}", headers=headers, trust_env=False)


def test_interrupting_the_cell_cancels_the_run(
    scripted: tuple[RunningServer, Path], tmp_path: Path
) -> None:
    server, script = scripted
    call = {"name": "python", "arguments": {"code": "import time; time.sleep(30)"}}
    write_script(script, {"content": "Sleeping.", "tool_calls": [call]}, {"content": "woke up"})
    runs = server.root / ".resolve" / "runs"
    before = set(runs.glob("*.jsonl")) if runs.exists() else set()
    with kernel(server, tmp_path) as (km, kc):
        # stop_on_error=False: the interrupted cell fails, and the kernel must not abort the
        # next request (it drops requests that arrive just after an error, by default)
        msg_id = kc.execute("%%resolve\nplease sleep", stop_on_error=False)
        deadline = time.monotonic() + 60
        log: Path | None = None
        while log is None or "tool.started" not in log.read_text():
            assert time.monotonic() < deadline, "the tool call never started"
            time.sleep(0.1)
            new = sorted(set(runs.glob("*.jsonl")) - before) if runs.exists() else []
            log = new[0] if new else None
        km.interrupt_kernel()
        reply = reply_to(kc, msg_id)
        assert reply["content"]["status"] == "error"
        assert reply["content"]["ename"] == "KeyboardInterrupt"
        records = [json.loads(line) for line in log.read_text().splitlines()]
        types = [r["type"] for r in records]
        assert types[-1] == "run.completed"
        assert records[-1]["data"]["reason"] == "cancelled"
        # The run ended while the tool call was still sleeping: cancelling did not wait for it
        # (a behaviour, not a stopwatch; how fast is bench's business).
        assert "tool.completed" not in types, "cancelling waited for the tool call"
        status, messages = collect(kc, "print('REASON', _resolve.reason, _resolve.run_id)")
        assert status == "ok", messages
        assert f"REASON cancelled {log.stem}" in texts(messages), messages


def test_approve_button_works_while_the_cell_runs(
    scripted: tuple[RunningServer, Path], tmp_path: Path
) -> None:
    """The Approve click reaches the kernel while the %%resolve cell is still busy."""
    server, script = scripted
    call = {"name": "shell", "arguments": {"command": "echo approved-and-ran"}}
    write_script(script, {"content": "", "tool_calls": [call]}, {"content": "done"})
    with kernel(server, tmp_path) as (_, kc):
        msg_id = kc.execute("%%resolve\nlist the files")
        approve: str | None = None
        deadline = time.monotonic() + 60
        while approve is None:
            assert time.monotonic() < deadline, "no Approve button appeared"
            msg = kc.get_iopub_msg(timeout=60)
            content = msg["content"]
            state = content.get("data", {}).get("state", {})
            if msg["msg_type"] == "comm_open" and state.get("description") == "Approve":
                approve = content["comm_id"]
        time.sleep(1.0)  # the call is waiting for a person now
        click = {"method": "custom", "content": {"event": "click"}}
        kc.shell_channel.send(kc.session.msg("comm_msg", {"comm_id": approve, "data": click}))
        assert reply_to(kc, msg_id)["content"]["status"] == "ok"
        _, messages = collect(
            kc, "print('RESULT', _resolve.reason, _resolve.tool_calls[0]['output'])"
        )
        out = texts(messages)
        assert "RESULT stop" in out and "approved-and-ran" in out, out
