"""Builtins through the whole chain into a real scratch kernel (DESIGN 3.3, 5)."""

from __future__ import annotations

import base64
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
