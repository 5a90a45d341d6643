"""Builtins through the whole chain into a real scratch kernel (DESIGN 3.3, 5)."""

from __future__ import annotations

import base64
import itertools
import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Server, Stream
from tests.scripting import call, script

# A 1×1 PNG, so the test needs no plotting library.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


def results(stream: Stream) -> list[dict[str, Any]]:
    return stream.of("tool.completed")


async def test_python_state_persists_within_a_session_not_across(
    server: Server, gateway: Any, tmp_path: Path
) -> None:
    script(
        gateway,
        tmp_path,
        call("python", code="x = 41"),
        call("python", code="x + 1"),
        {"content": "done"},
    )
    first = await server.chat("one", session_id="s-one")
    assert [r["ok"] for r in results(first)] == [True, True]
    assert results(first)[1]["output"] == "42"
    # The next turn of the same session still sees x.
    script(gateway, tmp_path, call("python", code="print(x * 2)"), {"content": "ok"})
    again = await server.chat("two", session_id="s-one")
    assert results(again)[0]["output"] == "82"
    # Another session has its own namespace.
    script(gateway, tmp_path, call("python", code="x"), {"content": "ok"})
    other = await server.chat("three", session_id="s-two")
    assert results(other)[0]["ok"] is False
    assert "NameError" in results(other)[0]["output"]
    started = first.of("tool.started")
    assert [s["name"] for s in started] == ["python", "python"]
    order = first.types()
    assert (
        order.index("tool.requested") < order.index("tool.started") < order.index("tool.completed")
    )


async def test_agent_code_sees_no_secrets(
    server: Server, gateway: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-canary-env-4242")
    monkeypatch.setenv("JUPYTERHUB_API_TOKEN", "hub-canary-4242")
    monkeypatch.setenv("JUPYTER_RESOLVE_TOKEN", "resolve-canary-4242")
    script(
        gateway,
        tmp_path,
        call("python", code="import os; print(dict(os.environ))"),
        {"content": "ok"},
    )
    stream = await server.chat("env", session_id="s-env")
    output = results(stream)[0]["output"]
    assert "HOME" in output
    for secret in (
        "sk-canary-env-4242",
        "hub-canary-4242",
        "resolve-canary-4242",
        gateway.runtime_token,
        server.token,
    ):
        assert secret not in output


async def test_displayed_image_reaches_the_client_as_png(
    server: Server, gateway: Any, tmp_path: Path
) -> None:
    code = (
        "import base64\nfrom IPython.display import Image, display\n"
        f"display(Image(data=base64.b64decode({base64.b64encode(PNG).decode()!r})))"
    )
    script(gateway, tmp_path, call("python", code=code), {"content": "a dot"})
    stream = await server.chat("plot", session_id="s-img")
    result = results(stream)[0]
    assert result["ok"] is True
    assert base64.b64decode(result["mime"]["image/png"]) == PNG
    assert "image/png" in result["output"]  # the model is told an image was shown


async def test_file_tools_are_confined(
    server: Server, gateway: Any, tmp_path: Path, jp_root_dir: Path
) -> None:
    outside = jp_root_dir / "secret.txt"
    outside.write_text("top secret")
    script(
        gateway,
        tmp_path,
        call("write_file", path="notes/a.txt", content="hello"),
        call("read_file", path="notes/a.txt"),
        call("read_file", path="../../../../secret.txt"),
        call("read_file", path=str(outside)),
        call("python", code=f"import os; os.symlink({str(outside)!r}, 'link.txt')"),
        call("read_file", path="link.txt"),
        call("write_file", path="context/x.txt", content="no"),
        {"content": "done"},
    )
    stream = await server.chat("files", session_id="s-files")
    r = results(stream)
    assert [x["ok"] for x in r] == [True, True, False, False, True, False, False]
    assert "hello" in r[1]["output"]
    for refused in (r[2], r[3], r[5], r[6]):
        assert "top secret" not in refused["output"]
    work = jp_root_dir / ".resolve" / "sessions" / "s-files" / "work"
    assert (work / "notes" / "a.txt").read_text() == "hello"
    assert not (work.parent / "context" / "x.txt").exists()


async def test_killed_scratch_kernel_gives_error_then_next_call_works(
    server: Server, gateway: Any, tmp_path: Path
) -> None:
    script(
        gateway,
        tmp_path,
        call("python", code="import os; os._exit(1)"),
        call("python", code="1 + 1"),
        {"content": "recovered"},
    )
    stream = await server.chat("die", session_id="s-die")
    r = results(stream)
    assert r[0]["ok"] is False and "died" in r[0]["output"]
    assert r[1]["ok"] is True and r[1]["output"] == "2"
    assert stream.text() == "recovered"


async def test_python_timeout_interrupts_the_kernel(
    server: Server, gateway: Any, tmp_path: Path
) -> None:
    gateway.config.tool_timeout = 1.0
    script(
        gateway,
        tmp_path,
        call("python", code="import time; y = 5; time.sleep(30)"),
        call("python", code="y"),
        {"content": "ok"},
    )
    stream = await server.chat("slow", session_id="s-slow")
    r = results(stream)
    assert r[0]["ok"] is False and "timed out" in r[0]["output"]
    assert r[1]["output"] == "5"  # interrupted, not restarted: state survives


async def test_context_attachments_are_materialized_read_only(
    server: Server, gateway: Any, tmp_path: Path, jp_root_dir: Path
) -> None:
    (jp_root_dir / "data.csv").write_text("a,b\n1,2\n")
    script(gateway, tmp_path, call("read_file", path="context/data.csv"), {"content": "ok"})
    stream = await server.chat("read it", session_id="s-ctx", attachments=["data.csv"])
    assert "a,b" in results(stream)[0]["output"]
    context = jp_root_dir / ".resolve" / "sessions" / "s-ctx" / "context"
    assert oct((context / "data.csv").stat().st_mode & 0o777) == "0o400"
    manifest = json.loads((context / "MANIFEST.json").read_text())
    assert len(manifest["data.csv"]) == 64
    bad = await server.post(
        "/resolve/api/chat",
        {"messages": [{"role": "user", "content": "x"}], "attachments": ["../../etc/passwd"]},
    )
    assert bad.status_code == 400 and "attachments" in bad.json()["error"]["message"]


async def test_scripted_demo_runs_fenced_python(server: Server) -> None:
    stream = await server.chat("Please run:\n```python\nprint(6 * 7)\n```", session_id="s-demo")
    assert results(stream)[0]["output"].strip() == "42"
    assert "42" in stream.text()


async def test_tools_endpoint_lists_the_bridge(server: Server) -> None:
    tools = (await server.get("/resolve/api/tools")).json()["tools"]
    names = [t["function"]["name"] for t in tools]
    assert "python" in names and "read_file" in names
    assert (await server.get("/resolve/api/health")).json()["drift"] == []


def test_environment_allowlist_is_explicit() -> None:
    from jupyter_resolve.scratch.kernels import kernel_environment
    from jupyter_resolve.scratch.workspace import Workspace

    os.environ["SOME_SECRET_TOKEN"] = "x"
    try:
        env = kernel_environment(Workspace(Path("/tmp/ws")))
    finally:
        del os.environ["SOME_SECRET_TOKEN"]
    assert "SOME_SECRET_TOKEN" not in env
    assert env["HOME"] == "/tmp/ws/home" and env["TMPDIR"] == "/tmp/ws/tmp"


async def test_scratch_kernels_are_not_user_kernels_and_idle_ones_stop(
    server: Server, gateway: Any, tmp_path: Path, jp_root_dir: Path
) -> None:
    script(gateway, tmp_path, call("write_file", path="kept.txt", content="k"), {"content": "ok"})
    await server.chat("x", session_id="s-idle")
    assert "s-idle" in gateway.kernels.kernels
    assert (await server.get("/api/kernels")).json() == []
    await gateway.kernels.cull(idle_seconds=0)
    assert "s-idle" not in gateway.kernels.kernels
    assert (jp_root_dir / ".resolve/sessions/s-idle/work/kept.txt").read_text() == "k"


async def test_web_fetch_reads_a_page_and_refuses_private_addresses(
    server: Server, gateway: Any, tmp_path: Path
) -> None:
    from tests.fakes._server import FakeServer, Part, Reply

    page = b"<html><head><script>evil()</script></head><body><h1>Title</h1><p>Body text</p>"
    site = FakeServer([Reply(200, [("Content-Type", "text/html")], [Part(page)], "length")])
    await site.start()
    try:
        url = f"http://127.0.0.1:{site.port}/page"
        gateway.config.approval_policy = {"web_fetch": "auto"}  # this test is not about approval
        script(gateway, tmp_path, call("web_fetch", url=url), {"content": "ok"})
        refused = results(await server.chat("fetch", session_id="s-web"))[0]
        assert refused["ok"] is False and "allow_private_fetch" in refused["output"]
        gateway.config.allow_private_fetch = True
        script(gateway, tmp_path, call("web_fetch", url=url), {"content": "ok"})
        fetched = results(await server.chat("fetch", session_id="s-web"))[0]
        assert fetched["ok"] is True
        assert "Title" in fetched["output"] and "Body text" in fetched["output"]
        assert "evil" not in fetched["output"]
    finally:
        await site.stop()


async def test_bwrap_sandbox_confines_agent_code(
    server: Server, gateway: Any, tmp_path: Path, jp_root_dir: Path
) -> None:
    from jupyter_resolve.scratch.sandbox import bwrap_available

    if not bwrap_available():
        pytest.skip("bubblewrap cannot create namespaces on this machine")
    gateway.kernels.sandbox = "bwrap"
    home = Path(os.path.expanduser("~"))
    (home / "private.txt").write_text("home secret")
    port = int(server.base.split(":")[2].split("/")[0])
    code = (
        "import os, socket\n"
        "open('inside.txt', 'w').write('ok')\n"
        "try:\n    open('/tmp/escape.txt', 'w')\nexcept OSError as e:\n    print('tmp:', e)\n"
        f"print('home:', os.path.exists({str(home / 'private.txt')!r}))\n"
        "s = socket.socket()\ns.settimeout(2)\n"
        f"try:\n    s.connect(('127.0.0.1', {port}))\n    print('net: reached the server')\n"
        "except OSError as e:\n    print('net:', e)\n"
    )
    script(gateway, tmp_path, call("python", code=code), {"content": "ok"})
    stream = await server.chat("sandbox", session_id="s-bwrap")
    output = results(stream)[0]["output"]
    assert "tmp: [Errno 30] Read-only file system" in output
    assert "home: False" in output
    assert "net: [Errno 111] Connection refused" in output  # the server is not in its network
    assert (jp_root_dir / ".resolve/sessions/s-bwrap/work/inside.txt").read_text() == "ok"


# Agent code that tampers with context/ and then kills its kernel, so that the next call
# re-materializes (issue 14, item 3). Every step is tried; under bwrap each one fails (context/
# is read-only inside), without a sandbox each one succeeds and the gateway must not trip.
TAMPER = """
import json, os
ctx = os.path.abspath('../context')
report = open('tamper.log', 'w')
def attempt(what, step):
    try:
        step()
        print(what, 'done', file=report)
    except OSError as exc:
        print(what, 'refused:', exc, file=report)
def swap_file():
    os.chmod(ctx, 0o700)
    os.chmod(ctx + '/data.csv', 0o600)
    os.unlink(ctx + '/data.csv')
    os.symlink({victim!r}, ctx + '/data.csv')
def swap_folder():
    os.chmod(ctx + '/sub', 0o700)
    os.chmod(ctx + '/sub/inner.csv', 0o600)
    os.unlink(ctx + '/sub/inner.csv')
    os.rmdir(ctx + '/sub')
    os.symlink({outside!r}, ctx + '/sub')
def rewrite_manifest():
    os.chmod(ctx + '/MANIFEST.json', 0o600)
    with open(ctx + '/MANIFEST.json', 'w') as out:
        json.dump({{name: '0' * 64 for name in ('data.csv', 'sub/inner.csv', 'private.txt')}}, out)
attempt('file', swap_file)
attempt('folder', swap_folder)
attempt('manifest', rewrite_manifest)
report.close()
os._exit(1)
"""


@pytest.mark.parametrize("sandbox", ["", "bwrap"])
async def test_rematerializing_context_follows_nothing_agent_code_planted(
    server: Server, gateway: Any, tmp_path: Path, jp_root_dir: Path, sandbox: str
) -> None:
    from jupyter_resolve.scratch.sandbox import bwrap_available

    if sandbox == "bwrap" and not bwrap_available():
        pytest.skip("bubblewrap cannot create namespaces on this machine")
    gateway.kernels.sandbox = sandbox
    (jp_root_dir / "data.csv").write_text("a,b\n1,2\n")
    (jp_root_dir / "sub").mkdir()
    (jp_root_dir / "sub" / "inner.csv").write_text("inner\n")
    (jp_root_dir / "private.txt").write_text("not attached")
    outside = tmp_path / "outside"  # outside the server root
    outside.mkdir()
    (outside / "inner.csv").write_text("precious")
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    victim.chmod(0o644)
    session = f"s-tamper{sandbox}"
    script(
        gateway,
        tmp_path,
        call("python", code=TAMPER.format(victim=str(victim), outside=str(outside))),
        call("python", code="print(open('../context/data.csv').read())"),
        {"content": "ok"},
    )
    stream = await server.chat("x", session_id=session, attachments=["data.csv", "sub/inner.csv"])
    r = results(stream)
    assert r[0]["ok"] is False and "died" in r[0]["output"]  # the kernel was killed
    assert r[1]["ok"] is True and "a,b" in r[1]["output"]  # re-materialized, from the root
    # Nothing outside context/ was written, chmodded or removed.
    assert victim.read_text() == "precious" and victim.stat().st_mode & 0o777 == 0o644
    assert (outside / "inner.csv").read_text() == "precious"
    assert sorted(p.name for p in outside.iterdir()) == ["inner.csv"]
    context = jp_root_dir / ".resolve" / "sessions" / session / "context"
    for rel, text in (("data.csv", "a,b\n1,2\n"), ("sub/inner.csv", "inner\n")):
        path = context / rel
        assert not path.is_symlink() and not path.parent.is_symlink()
        assert path.read_text() == text and path.stat().st_mode & 0o777 == 0o400
    # The manifest the agent rewrote is not what the gateway went by; it was put back.
    assert not (context / "private.txt").exists()
    manifest = json.loads((context / "MANIFEST.json").read_text())
    assert sorted(manifest) == ["data.csv", "sub/inner.csv"]
    record = jp_root_dir / ".resolve" / "context-manifests" / f"{session}.json"
    assert json.loads(record.read_text()) == manifest
    report = (context.parent / "work" / "tamper.log").read_text()
    for what in ("file", "folder", "manifest"):
        if sandbox == "bwrap":  # inside, context/ is read-only: no step got anywhere
            assert f"{what} refused: [Errno 30] Read-only file system" in report
        else:  # the agent did it all; the gateway above did not fall for it
            assert f"{what} done" in report


async def test_attachment_through_a_symlinked_folder_stays_in_context(
    server: Server, gateway: Any, tmp_path: Path, jp_root_dir: Path
) -> None:
    deep = jp_root_dir / "a" / "b" / "c" / "d" / "e" / "f"
    deep.mkdir(parents=True)
    (deep / "inner.csv").write_text("deep data")
    (jp_root_dir / "x.txt").write_text("x")
    (jp_root_dir / "deep").symlink_to(deep)
    # deep/../../../../../../x.txt is the root's x.txt, but taken literally under context/ the
    # six '..' climb out of the session, .resolve and the server root.
    climbing = "deep/" + "../" * 6 + "x.txt"
    bad = await server.post(
        "/resolve/api/chat",
        {"messages": [{"role": "user", "content": "x"}], "attachments": [climbing]},
    )
    assert bad.status_code == 400 and "'..'" in bad.json()["error"]["message"]
    assert not (jp_root_dir.parent / "x.txt").exists()
    # Through the link, the copy lands where the file really is, relative to the root.
    script(
        gateway,
        tmp_path,
        call("read_file", path="context/a/b/c/d/e/f/inner.csv"),
        {"content": "ok"},
    )
    stream = await server.chat("x", session_id="s-deep", attachments=["deep/inner.csv"])
    assert results(stream)[0]["output"].strip().endswith("deep data")
    context = jp_root_dir / ".resolve" / "sessions" / "s-deep" / "context"
    assert not (context / "deep").exists()
    assert sorted(json.loads((context / "MANIFEST.json").read_text())) == ["a/b/c/d/e/f/inner.csv"]


async def test_health_says_whether_agent_code_is_sandboxed(server: Server, gateway: Any) -> None:
    from jupyter_resolve.scratch.sandbox import bwrap_available

    # The default is auto: bubblewrap where it works on this machine.
    expected = "bwrap" if bwrap_available() else ""
    assert gateway.kernels.sandbox == expected
    sandbox = (await server.get("/resolve/api/health")).json()["sandbox"]
    if expected:
        assert sandbox == {"kind": "bwrap", "label": "sandboxed"}
    else:
        assert sandbox == {"kind": "none", "label": "unsandboxed: agent code runs as you"}
    gateway.kernels.sandbox = ""
    sandbox = (await server.get("/resolve/api/health")).json()["sandbox"]
    assert sandbox == {"kind": "none", "label": "unsandboxed: agent code runs as you"}


def test_sandbox_setting_maps_to_what_kernels_use() -> None:
    import logging

    from traitlets import TraitError

    from jupyter_resolve.config import Resolve
    from jupyter_resolve.scratch.sandbox import bwrap_available, effective_sandbox

    log = logging.getLogger("test-sandbox")
    assert Resolve().sandbox == "auto"
    assert effective_sandbox("none", log) == "" and effective_sandbox("", log) == ""  # old configs
    assert effective_sandbox("bwrap", log) == "bwrap"  # asked for: never silently dropped
    assert effective_sandbox("auto", log) == ("bwrap" if bwrap_available() else "")
    with pytest.raises(TraitError):
        Resolve(sandbox="firejail")


def test_sandbox_mounts_hide_after_they_show(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The mount order: the server root inside a hidden home is shown again, the runtime
    directory inside that server root is hidden after it, and a home of / hides nothing."""
    from jupyter_resolve.scratch.sandbox import bwrap_prefix

    home = tmp_path / "home"
    runtime = home / ".local" / "share" / "jupyter" / "runtime"
    session = home / ".resolve" / "sessions" / "s1"
    for folder in (runtime, session / "work", session / "context"):
        folder.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(runtime))
    argv = bwrap_prefix(session, home, False, state_dir=home / ".resolve", reads_root=True)
    pairs = list(itertools.pairwise(argv))
    where = {pair: index for index, pair in enumerate(pairs)}
    shown, hidden = ("--ro-bind", str(home)), ("--tmpfs", str(runtime))
    assert where[("--tmpfs", str(home))] < where[shown] < where[hidden]
    assert (
        where[shown] < where[("--tmpfs", str(home / ".resolve"))] < where[("--bind", str(session))]
    )
    assert where[("--bind", str(session))] < where[("--ro-bind", str(session / "context"))]
    assert {"--unshare-pid", "--unshare-ipc", "--unshare-net"} <= set(argv)
    assert ("--cap-drop", "ALL") in pairs
    monkeypatch.setenv("HOME", "/")
    assert ("--tmpfs", "/") not in list(
        itertools.pairwise(bwrap_prefix(session, home, False, reads_root=True))
    )
