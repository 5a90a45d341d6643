"""Scratch kernels from the kernelspec ``c.Resolve.scratch_kernel_name``, through its kernel
provisioner (issue 21, item 6): a custom provisioner registered by entry point, the sandbox rule
for provisioners that are not local, the bridge shipped into a kernel that cannot import
kernel_tools, and a missing kernelspec named at the first tool call and in health."""

from __future__ import annotations

import json
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Server, Stream
from tests.fakes.provisioners import EVIDENCE, register
from tests.scripting import call, script

SHOW_EVIDENCE = f"import os; print(os.environ.get({EVIDENCE!r}))"


def results(stream: Stream) -> list[dict[str, Any]]:
    return stream.of("tool.completed")


def kernelspec(
    kernels: Path,
    name: str,
    *,
    provisioner: str | None = None,
    marker: str = "",
    python_flags: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
) -> None:
    """A Python kernelspec in the server's kernel folder (found like any installed one)."""
    spec: dict[str, Any] = {
        "argv": [
            sys.executable,
            *python_flags,
            "-m",
            "ipykernel_launcher",
            "-f",
            "{connection_file}",
        ],
        "display_name": name,
        "language": "python",
        "metadata": {},
    }
    if provisioner is not None:
        spec["metadata"]["kernel_provisioner"] = {
            "provisioner_name": provisioner,
            "config": {"marker": marker},
        }
    if env is not None:
        spec["env"] = env
    folder = kernels / name
    folder.mkdir(parents=True)
    (folder / "kernel.json").write_text(json.dumps(spec))


@pytest.fixture
def provisioners(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The test provisioners, installed as a distribution on the server's import path."""
    monkeypatch.syspath_prepend(str(register(tmp_path / "dists")))


@pytest.mark.parametrize("resolve_config", [{"scratch_kernel_name": "marked"}])
async def test_scratch_kernel_comes_through_the_kernelspecs_provisioner(
    server: Server, gateway: Any, tmp_path: Path, jp_kernel_dir: Path, provisioners: None
) -> None:
    kernelspec(jp_kernel_dir, "marked", provisioner="resolve-test-marking", marker="m-7")
    script(
        gateway,
        tmp_path,
        call("python", code=SHOW_EVIDENCE),
        call("write_file", path="out.txt", content="through the bridge"),
        call("read_file", path="out.txt"),
        {"content": "done"},
    )
    stream = await server.chat("go", session_id="s-marked")
    r = results(stream)
    assert r[0] == {**r[0], "ok": True, "output": "marking:m-7"}  # the provisioner launched it
    assert [x["ok"] for x in r[1:]] == [True, True]  # the bridge is installed there
    assert "through the bridge" in r[2]["output"]
    assert gateway.kernels.kernels["s-marked"].direct is not None  # launched here: direct calls
    health = (await server.get("/resolve/api/health")).json()
    assert health["scratch_kernel"] == {
        "kernelspec": "marked",
        "provisioner": "resolve-test-marking",
        "local": True,  # a LocalProvisioner subclass: the sandbox, if any, wraps it
        "problem": None,
        "where": "local",  # c.Resolve.scratch_kernels
        "isolation": health["sandbox"]["label"],
    }
    assert health["config_problems"] == []


@pytest.mark.parametrize("resolve_config", [{"scratch_kernel_name": "foreign"}])
async def test_a_provisioner_that_is_not_local_is_refused_under_the_sandbox_only(
    server: Server, gateway: Any, tmp_path: Path, jp_kernel_dir: Path, provisioners: None
) -> None:
    kernelspec(jp_kernel_dir, "foreign", provisioner="resolve-test-foreign", marker="f-3")
    gateway.kernels.sandbox = "bwrap"  # refused before anything is launched
    script(gateway, tmp_path, call("python", code=SHOW_EVIDENCE), {"content": "refused"})
    refused = results(await server.chat("go", session_id="s-foreign"))[0]
    assert refused["ok"] is False
    assert "'foreign'" in refused["output"] and "'resolve-test-foreign'" in refused["output"]
    assert "c.Resolve.sandbox = 'none'" in refused["output"]
    assert "s-foreign" not in gateway.kernels.kernels
    health = (await server.get("/resolve/api/health")).json()
    assert health["scratch_kernel"]["local"] is False
    assert health["scratch_kernel"]["problem"] == refused["output"].removeprefix("python: ")
    assert health["config_problems"] == [health["scratch_kernel"]["problem"]]
    # Without the sandbox it starts, through that provisioner, with the bridge.
    gateway.kernels.sandbox = ""
    script(
        gateway,
        tmp_path,
        call("python", code=SHOW_EVIDENCE),
        call("list_dir", path=""),
        {"content": "ran"},
    )
    r = results(await server.chat("again", session_id="s-foreign"))
    assert r[0]["output"] == "foreign:f-3"
    assert r[1]["ok"] is True
    # Launched elsewhere, as far as the gateway knows: calls keep to the shell channel.
    assert gateway.kernels.kernels["s-foreign"].direct is None
    assert (await server.get("/resolve/api/health")).json()["scratch_kernel"]["problem"] is None


@pytest.mark.parametrize("resolve_config", [{"scratch_kernel_name": "own-command"}])
async def test_a_local_provisioner_that_skips_the_sandbox_prefix_is_refused(
    server: Server, gateway: Any, tmp_path: Path, jp_kernel_dir: Path, provisioners: None
) -> None:
    kernelspec(jp_kernel_dir, "own-command", provisioner="resolve-test-own-command")
    gateway.kernels.sandbox = "bwrap"  # refused before the launch: bwrap itself is not needed
    script(gateway, tmp_path, call("python", code="1 + 1"), {"content": "refused"})
    refused = results(await server.chat("go", session_id="s-own"))[0]
    assert refused["ok"] is False
    assert "without the bubblewrap prefix" in refused["output"]
    assert "'own-command'" in refused["output"]
    assert "s-own" not in gateway.kernels.kernels


def test_kernelspecs_scratch_kernels_cannot_use_are_described(tmp_path: Path) -> None:
    import logging

    from jupyter_client.kernelspec import KernelSpecManager

    from jupyter_resolve.scratch.kernelspec import inspect_kernelspec

    kernelspec(tmp_path, "r-lang")
    spec_file = tmp_path / "r-lang" / "kernel.json"
    spec_file.write_text(json.dumps({**json.loads(spec_file.read_text()), "language": "R"}))
    kernelspec(tmp_path, "unknown-provisioner", provisioner="no-such-provisioner")
    specs = KernelSpecManager(kernel_dirs=[str(tmp_path)])
    log = logging.getLogger("test-kernelspec")
    r_lang = inspect_kernelspec("r-lang", specs, log)
    assert r_lang.problem is not None and "runs R" in r_lang.problem
    unknown = inspect_kernelspec("unknown-provisioner", specs, log)
    assert unknown.problem is not None
    assert "'no-such-provisioner', which is not installed" in unknown.problem
    assert unknown.refusal("") == unknown.problem  # a problem refuses with or without sandbox


@pytest.mark.parametrize("resolve_config", [{"scratch_kernel_name": "bare"}])
async def test_the_bridge_is_shipped_into_a_kernel_without_kernel_tools(
    server: Server, gateway: Any, tmp_path: Path, jp_kernel_dir: Path, jp_root_dir: Path
) -> None:
    # No site module and a PYTHONPATH of site-packages only: ipykernel imports, and
    # kernel_tools (on the gateway's PYTHONPATH, or an editable install's .pth) does not.
    site_packages = sysconfig.get_paths()["purelib"]
    kernelspec(jp_kernel_dir, "bare", python_flags=("-S",), env={"PYTHONPATH": site_packages})
    probe = (
        "import sys\n"
        "print(sys.modules['kernel_tools'].__file__)\n"
        "print(sorted(n for n in dir() if n.startswith('__resolve')))"
    )
    script(
        gateway,
        tmp_path,
        call("python", code=probe),
        call("write_file", path="notes/a.txt", content="shipped"),
        call("read_file", path="notes/a.txt"),
        call("read_file", path="../../../../outside.txt"),
        {"content": "done"},
    )
    stream = await server.chat("go", session_id="s-bare")
    r = results(stream)
    assert r[0]["ok"] is True, r[0]["output"]
    assert r[0]["output"].splitlines() == [
        "/<kernel_tools shipped by jupyter-resolve>/kernel_tools/__init__.py",
        "['__resolve_bridge']",  # the loader left nothing else in the agent's namespace
    ]
    assert [x["ok"] for x in r[1:]] == [True, True, False]  # confined like the installed bridge
    assert "shipped" in r[2]["output"]
    assert gateway.kernels.kernels["s-bare"].direct is not None  # the shipped bridge opened it
    work = jp_root_dir / ".resolve" / "sessions" / "s-bare" / "work"
    assert (work / "notes" / "a.txt").read_text() == "shipped"


@pytest.mark.parametrize("resolve_config", [{"scratch_kernel_name": "no-such-kernel"}])
async def test_a_missing_kernelspec_is_named_at_the_first_tool_call_and_in_health(
    server: Server, gateway: Any, tmp_path: Path, jp_kernel_dir: Path
) -> None:
    health = (await server.get("/resolve/api/health")).json()
    problem = health["scratch_kernel"]["problem"]
    assert "'no-such-kernel'" in problem and "jupyter kernelspec list" in problem
    assert problem in health["config_problems"]
    script(
        gateway,
        tmp_path,
        call("python", code="1 + 1"),
        call("read_file", path="x.txt"),
        {"content": "no kernel"},
    )
    stream = await server.chat("go", session_id="s-missing")
    r = results(stream)
    assert [x["output"] for x in r] == [f"python: {problem}", f"read_file: {problem}"]
    assert stream.text() == "no kernel"  # the run goes on; the model is told
    # Installing it fixes the next call, without a restart.
    kernelspec(jp_kernel_dir, "no-such-kernel")
    script(gateway, tmp_path, call("python", code="1 + 1"), {"content": "ok"})
    assert results(await server.chat("again", session_id="s-missing"))[0]["output"] == "2"
    assert (await server.get("/resolve/api/health")).json()["config_problems"] == []


def test_the_setting_defaults_to_python3() -> None:
    from jupyter_resolve.config import Resolve

    assert Resolve().scratch_kernel_name == "python3"
