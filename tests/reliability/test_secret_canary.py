"""A provider key set in the server's environment reaches the provider call and nothing else:
not the runtime's environment or argv, not a frame, event or run log, not the scratch kernel,
not any file under .resolve (issue 10)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Server
from tests.fakes.openai_server import FakeOpenAI, text, tool_call

CANARY = "sk-canary-3f9d2c7e1b"


@pytest.fixture
def fake(jp_asyncio_loop: Any) -> Iterator[FakeOpenAI]:
    server = FakeOpenAI([*tool_call(), *text()])
    jp_asyncio_loop.run_until_complete(server.start())
    yield server
    jp_asyncio_loop.run_until_complete(server.stop())


@pytest.fixture
def resolve_config(fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    monkeypatch.setenv("CANARY_PROVIDER_KEY", CANARY)
    return {
        "provider": "openai",
        "base_url": fake.base_url,
        "model": "fake-model",
        "api_key_env": "CANARY_PROVIDER_KEY",
    }


async def test_the_key_goes_to_the_provider_and_nowhere_else(
    server: Server, gateway: Any, fake: FakeOpenAI, jp_root_dir: Path
) -> None:
    # The fake's tool call runs `print(6*7)`; then ask the kernel for its environment too.
    stream = await server.chat("compute", session_id="s-canary")
    assert stream.of("tool.completed")[0]["output"] == "42"
    kernel = gateway.kernels.kernels["s-canary"]
    env_dump = await kernel.execute("import os; print(dict(os.environ))", timeout=30)
    assert "HOME" in env_dump.stdout and CANARY not in env_dump.stdout

    # The provider call carries it, as the Authorization header only.
    assert all(r.headers["authorization"] == f"Bearer {CANARY}" for r in fake.requests)
    assert all(CANARY not in json.dumps(r.body) for r in fake.requests)
    # Nowhere in what clients saw, nor in the runtime, nor on disk.
    assert CANARY not in json.dumps([e.data for e in stream.events])
    pid = gateway.supervisor.pid
    for name in ("environ", "cmdline"):
        assert CANARY.encode() not in Path(f"/proc/{pid}/{name}").read_bytes()
    for path in (jp_root_dir / ".resolve").rglob("*"):
        if path.is_file():
            assert CANARY.encode() not in path.read_bytes(), path
    health = (await server.get("/resolve/api/health")).text
    assert CANARY not in health and "CANARY_PROVIDER_KEY" in health  # the name, not the value


async def test_the_key_is_taken_out_of_the_servers_environment(server: Server) -> None:
    import os

    # Kernels and terminals the server starts inherit its environment: the key is not there.
    assert "CANARY_PROVIDER_KEY" not in os.environ
    assert (await server.get("/resolve/api/health")).json()["provider"]["api_key_set"] is True


# What agent code can find on this machine: every process's initial environment and command
# line, and every JSON file under the server root and the Jupyter runtime directory (the
# server's jpserver-<pid>.json, kernels' connection files). Written to a file, not printed: the
# tool output is cut at 20,000 characters, and the unsandboxed control run finds a lot.
SCAN = """
import json, os
found = {{"pids": {{}}, "files": {{}}}}
for pid in sorted(p for p in os.listdir('/proc') if p.isdigit()):
    entry = found["pids"][pid] = {{}}
    for name in ('environ', 'cmdline'):
        try:
            with open(f'/proc/{{pid}}/{{name}}', 'rb') as handle:
                entry[name] = handle.read().decode('utf-8', 'replace')
        except OSError as exc:
            entry[name] = f'unreadable: {{exc}}'
for top in {tops!r}:
    for folder, _, names in os.walk(top):
        for name in names:
            if name.endswith('.json'):
                path = os.path.join(folder, name)
                try:
                    with open(path) as handle:
                        found["files"][path] = handle.read()
                except OSError as exc:
                    found["files"][path] = f'unreadable: {{exc}}'
with open({dest!r}, 'w') as out:
    json.dump(found, out)
"""


def _resolve_token_of(kernel_dump: dict[str, Any], connection_file: str) -> str:
    for entry in kernel_dump["pids"].values():
        if connection_file in entry["cmdline"]:
            for item in entry["environ"].split("\0"):
                if item.startswith("JUPYTER_RESOLVE_TOKEN="):
                    return item.partition("=")[2]
    raise AssertionError("the user's kernel (or its JUPYTER_RESOLVE_TOKEN) was not found")


def test_sandboxed_agent_code_cannot_read_secrets_through_proc(tmp_path: Path) -> None:
    """Issue 14, item 4: a real server holding a provider key and a Jupyter token in its
    initial environment, its token in jpserver-<pid>.json under a server root that is also the
    home, a user kernel holding JUPYTER_RESOLVE_TOKEN, and agent-httpd. The same scan finds all
    of them from outside (the same-user limit) and none from sandboxed agent code."""
    import secrets
    import subprocess
    import sys

    import httpx

    from jupyter_resolve.scratch.sandbox import bwrap_available
    from tests.launcher import JupyterServer

    if not bwrap_available():
        pytest.skip("bubblewrap cannot create namespaces on this machine")
    provider_key, jupyter_token = f"sk-canary-{secrets.token_hex(8)}", secrets.token_hex(24)
    root = tmp_path / "root"  # root is the home, as for `jupyter lab` in ~
    runtime_dir = root / ".local" / "share" / "jupyter" / "runtime"
    tops = [str(root), str(runtime_dir)]
    script_file = tmp_path / "script.jsonl"
    code = SCAN.format(tops=tops, dest="scan.json")  # relative: the scratch kernel's work/
    turns = [{"content": "", "tool_calls": [{"name": "python", "arguments": {"code": code}}]}]
    script_file.write_text("".join(json.dumps(t) + "\n" for t in [*turns, {"content": "done"}]))
    server = JupyterServer(
        tmp_path,
        token=jupyter_token,
        token_in_env=True,  # in the server's initial environment
        argv=[f"--Resolve.script={script_file}", "--Resolve.api_key_env=CANARY_PROVIDER_KEY"],
        # the provider key likewise, though the gateway pops it from os.environ
        env={"HOME": str(root), "CANARY_PROVIDER_KEY": provider_key},
        drop_env=("JUPYTER", "CANARY"),
        own_runtime_dir=False,  # under the home, where `jupyter lab` in ~ keeps it
        ready="health",
        stop_timeout=30,
    )
    with server:  # a real `jupyter server`, ready when its health route answers
        options: dict[str, Any] = {"timeout": 60, "trust_env": False}
        with httpx.Client(base_url=server.url, headers=server.headers, **options) as http:
            health = http.get("/resolve/api/health").json()
            assert health["sandbox"] == {"kind": "bwrap", "label": "sandboxed"}  # the default
            runtime_pid = str(health["runtime"]["pid"])
            kernel_id = http.post("/api/kernels", json={"name": "python3"}).json()["id"]
            connection_file = str(runtime_dir / f"kernel-{kernel_id}.json")
            with http.stream(
                "POST",
                "/resolve/api/chat",
                json={"messages": [{"role": "user", "content": "scan"}], "session_id": "s-scan"},
            ) as response:
                body = "".join(response.iter_text())
            assert "event: run.completed" in body, body

            # The control: the same scan from outside the sandbox finds every secret.
            subprocess.run(
                [sys.executable, "-c", SCAN.format(tops=tops, dest="control.json")],
                cwd=tmp_path,
                check=True,
                timeout=120,
            )
            control = json.loads((tmp_path / "control.json").read_text())
            resolve_token = _resolve_token_of(control, connection_file)
            kernel_key = json.loads(control["files"][connection_file])["key"]
            secrets_found = {
                "provider key": provider_key,
                "Jupyter token": jupyter_token,
                "JUPYTER_RESOLVE_TOKEN": resolve_token,
                "user kernel's key": kernel_key,
            }
            outside = json.dumps(control)
            for name, value in secrets_found.items():
                assert value in outside, f"the control scan missed the {name}"
            assert "agent-httpd" in control["pids"][runtime_pid]["cmdline"]
            assert any(path.rsplit("/", 1)[-1].startswith("jpserver-") for path in control["files"])

            # Sandboxed agent code: its own processes only, no runtime dir, no secret.
            inside = (root / ".resolve" / "sessions" / "s-scan" / "work" / "scan.json").read_text()
            for name, value in secrets_found.items():
                assert value not in inside, f"sandboxed agent code read the {name}"
            scan = json.loads(inside)
            assert "agent-httpd" not in inside and "jupyter_server" not in inside
            for pid, entry in scan["pids"].items():  # bwrap's init, the kernel, its children
                assert "ipykernel_launcher" in entry["cmdline"] or entry["cmdline"].startswith(
                    "bwrap"
                ), (pid, entry["cmdline"])
            assert not any("jpserver-" in path or "kernel-" in path for path in scan["files"])
            http.delete(f"/api/kernels/{kernel_id}")
