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
    # shell asks here (the default is auto): the Approve button test needs a call that waits
    args += ("--Resolve.approval_policy=shell=ask",)
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
print("SECOND RUN", _resolve.run_id, first_session)
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
    # what the call printed came live; its result is just that, so it is not printed twice
    assert "**🔧 python**\n```python\nprint(6 * 7)\n```\n[python] 42\n→ done in" in out
    assert "(its output is above)" in out
    assert "RESULT stop 42 session-" in out
    assert "(offline scripted model) The code ran" in out
    assert "of 8 rounds ·" in out and "tokens ·" in out
    assert "SAME SESSION True" in out and "NEW SESSION True" in out
    # the second %resolve continued the session: the first turn, its call and result, went along
    second_run, session = out.split("SECOND RUN ", 1)[1].split()[:2]
    context = live.run_log(second_run)[0]["data"]["context"]  # type: ignore[index]
    assert context["history_messages"] >= 4 and context["transcript_sha256"]  # type: ignore[index]
    transcript = live.get(f"resolve/api/sessions/{session}/transcript").json()["messages"]
    assert [m["role"] for m in transcript[:3]] == ["user", "assistant", "tool"]
    assert transcript[1]["tool_calls"][0]["function"]["name"] == "python"
    assert transcript[2]["content"].strip() == "42"
    assert "REPLAYED stop" in out
    # the runs table says what each run was asked
    assert "| run | session | started | state | asked |" in out
    assert "| stop | hello anew |" in out


def test_history_and_forget(live: RunningServer, tmp_path: Path) -> None:
    """``history`` shows both turns of the session; after ``forget`` the next chat starts a new
    session, whose transcript holds only the new turn, and the old one is named."""
    script = """\
%load_ext jupyter_resolve
%resolve first question about apples
first = _resolve.session_id
%resolve second question about pears
print("HISTORY START")
%resolve history
print("HISTORY END", len(_resolve_transcript["messages"]))
%resolve forget
%resolve third question about plums
print("AFTER FORGET", first, _resolve.session_id, _resolve.session_id != first)
"""
    done = ipython(script, live.kernel_env(), tmp_path)
    out = done.stdout
    assert done.returncode == 0, done.stderr + out
    history = out.split("HISTORY START", 1)[1].split("HISTORY END", 1)[0]
    assert history.count("**🧑 user**") == 2 and history.count("**🤖 assistant**") >= 2
    assert "first question about apples" in history and "second question about pears" in history
    first, second, changed = out.split("AFTER FORGET ", 1)[1].split()[:3]
    assert changed == "True"
    assert f"` {first} ` stays on the server" in out or f"{first} stays on the server" in out
    old = live.get(f"resolve/api/sessions/{first}/transcript").json()["messages"]
    assert [m["content"] for m in old if m["role"] == "user"] == [
        "first question about apples",
        "second question about pears",
    ]
    new = live.get(f"resolve/api/sessions/{second}/transcript").json()["messages"]
    assert [m["content"] for m in new if m["role"] == "user"] == ["third question about plums"]


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
        # still an error (a "run all" stops here), shown as one line, not a traceback
        assert reply["content"]["status"] == "error"
        assert reply["content"]["ename"] == "RunInterrupted"
        note = f"Interrupted: {log.stem} was cancelled on the server; what it did is in _resolve."
        assert reply["content"]["traceback"] == [note]
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


def shown_bundles(value: Any) -> list[dict[str, Any]]:
    """Every MIME bundle in some kernel messages: display data, and the outputs that widget
    state updates carry (an Output widget renders those, trusted)."""
    found: list[dict[str, Any]] = []
    if isinstance(value, dict):
        data = value.get("data")
        if isinstance(data, dict) and any("/" in key for key in data):
            found.append(data)
        for item in value.values():
            found += shown_bundles(item)
    elif isinstance(value, list):
        for item in value:
            found += shown_bundles(item)
    return found


def test_payloads_from_model_tools_and_run_log_are_shown_inert(
    scripted: tuple[RunningServer, Path], tmp_path: Path
) -> None:
    """Issue 14 item 1: a run whose answer, tool outputs and prompt (as a peer could send it,
    listed by %resolve runs) carry script reaches the notebook sanitized or escaped."""
    from tests.jupyter_resolve.magics.test_safe_html import assert_inert_html

    server, script = scripted
    img = '<img src=x onerror="window.__resolve_pwned=1">'
    svg = '<svg xmlns="http://www.w3.org/2000/svg" onload="window.__resolve_pwned=1"/>'
    shows = [f"HTML({'<script>window.__resolve_pwned=1</script>'!r})", f"SVG({svg!r})"]
    shows.append(f"Markdown({img!r})")
    # one call each: the python tool merges what one call displays into one bundle
    calls = [
        {"name": "python", "arguments": {"code": f"from IPython.display import *; display({s})"}}
        for s in shows
    ]
    turns = ({"content": f"Look {img}", "tool_calls": calls}, {"content": f"done {img}"})
    write_script(script, *turns)
    headers = {"Authorization": f"token {server.token}"}
    body = {"messages": [{"role": "user", "content": f"{img} from a peer"}]}
    started = httpx.post(
        f"{server.url}resolve/api/chat", headers=headers, json=body, timeout=120, trust_env=False
    )
    assert started.status_code == 200 and "run.completed" in started.text
    with kernel(server, tmp_path) as (_, kc):
        status, messages = collect(kc, f"%%resolve\nanswer with {img}", timeout=120)
        assert status == "ok", texts(messages)
        status, more = collect(kc, "%resolve runs\n%resolve replay {_resolve.run_id}")
        assert status == "ok", texts(more)
    bundles = shown_bundles(messages + more)
    safe = {"text/plain", "text/html", "text/markdown", "image/png", "image/jpeg", "image/gif"}
    safe.add("application/vnd.jupyter.widget-view+json")
    for bundle in bundles:
        assert set(bundle) <= safe, bundle
        for mime in ("text/html", "text/markdown"):
            if mime in bundle:
                assert_inert_html(bundle[mime])
    html = "\n".join(b.get("text/html", "") for b in bundles)
    assert "&lt;img src=x onerror=" in html  # the peer's prompt in the runs table, as text
    assert '<iframe sandbox=""' in html and "data:image/svg+xml;base64," in html


CHART = "![chart](https://example.test/chart.png)"


def shown_html(server: RunningServer, script: Path, tmp_path: Path) -> str:
    """The HTML a %%resolve cell shows for an answer holding a remote image."""
    write_script(script, {"content": f"See {CHART}"})
    with kernel(server, tmp_path) as (_, kc):
        status, messages = collect(kc, "%%resolve\ndraw")
        assert status == "ok", texts(messages)
    return "\n".join(b.get("text/html", "") for b in shown_bundles(messages))


def test_remote_images_are_links_unless_the_server_allows_them(
    scripted: tuple[RunningServer, Path], tmp_path: Path
) -> None:
    """Issue 14 item 12: %resolve applies c.Resolve.allow_remote_images, read from health."""
    server, script = scripted
    assert server.get("resolve/api/health").json()["allow_remote_images"] is False
    html = shown_html(server, script, tmp_path)
    assert '<a href="https://example.test/chart.png"' in html and "<img" not in html
    allowing = tmp_path / "allowing"
    with running_server(
        allowing, f"--Resolve.script={script}", "--Resolve.allow_remote_images=True"
    ) as other:
        assert other.get("resolve/api/health").json()["allow_remote_images"] is True
        html = shown_html(other, script, tmp_path)
    assert '<img src="https://example.test/chart.png" alt="chart">' in html
