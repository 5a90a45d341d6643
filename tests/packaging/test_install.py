"""Installing as a user does (issue 38): the release wheel into a fresh venv serves a chat with
the agent-httpd it ships; the sdist installs with no Node.js on PATH; with no C compiler, the
error names the package to install."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.launcher import JupyterServer
from tests.packaging.dists import (
    DEPS_VENVS,
    HOST_ARCH,
    Dists,
    fresh_venv,
    pip_install,
    tool_dir,
)

SITE = "import jupyter_resolve, pathlib; print(pathlib.Path(jupyter_resolve.__file__).parent)"


class VenvServer(JupyterServer):
    """``jupyter server`` run by another venv's Python, with the runtime that venv's package
    ships (no --Resolve.runtime_path)."""

    def __init__(self, python: Path, workdir: Path) -> None:
        super().__init__(workdir, cwd=workdir, drop_env=("PYTHONPATH",), ready="runtime")
        self.python = python

    def command(self) -> list[str]:
        argv = super().command()
        return [str(self.python), *(a for a in argv[1:] if "--Resolve.runtime_path" not in a)]


def package_dir(python: Path) -> Path:
    # from the venv's folder: run from the repository, `-c` would import the tree's package
    where = subprocess.run(
        [str(python), "-c", SITE], cwd=python.parent, capture_output=True, text=True, check=True
    )
    return Path(where.stdout.strip())


def other_python(version: str) -> Path:
    deps = DEPS_VENVS[version]
    if not (deps / ".stamp").exists():
        pytest.skip(f"no Python {version} on this machine (`make setup` makes {deps} where it is)")
    return deps


@pytest.mark.parametrize("version", ["dev", *DEPS_VENVS])
def test_the_wheel_serves_a_chat_from_a_fresh_venv(
    dists: Dists, tmp_path: Path, version: str
) -> None:
    """One py3-none wheel serves every Python from 3.10 on: the dev venv's and the oldest and
    newest the package claims."""
    if HOST_ARCH not in dists.wheels:
        pytest.skip(f"no release wheel for {HOST_ARCH}")
    deps = None if version == "dev" else other_python(version)
    python = fresh_venv(tmp_path / "venv", deps)
    if deps:
        ran = subprocess.run(
            [str(python), "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            check=True,
        )
        assert ran.stdout.strip() == version
    pip_install(python, dists.wheels[HOST_ARCH])
    package = package_dir(python)
    assert package.is_relative_to(tmp_path / "venv"), package
    shipped = package / "bin" / "agent-httpd"
    (tmp_path / "server").mkdir()
    with VenvServer(python, tmp_path / "server") as server:
        assert server.http is not None
        health = server.http.get(f"{server.url}/resolve/api/health").json()
        assert health["runtime"]["state"] == "running"
        assert Path(f"/proc/{health['runtime']['pid']}/exe").resolve() == shipped.resolve()
        chat = server.http.post(
            f"{server.url}/resolve/api/chat",
            json={"messages": [{"role": "user", "content": "hi"}]},
            timeout=60,
        )
        assert chat.status_code == 200, chat.text
        assert "event: run.completed" in chat.text
        assert "offline scripted model" in chat.text


def _source_build_env(tools: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CC", "PYTHONPATH")}
    env["PATH"] = str(tools)
    return env


def test_the_sdist_installs_without_node(dists: Dists, tmp_path: Path) -> None:
    tools = tool_dir(tmp_path / "tools", compiler=True)
    assert not (tools / "node").exists() and not (tools / "npm").exists()
    python = fresh_venv(tmp_path / "venv")
    pip_install(python, dists.sdist, env=_source_build_env(tools))
    runtime = package_dir(python) / "bin" / "agent-httpd"
    assert os.access(runtime, os.X_OK)
    panel = tmp_path / "venv" / "share" / "jupyter" / "labextensions" / "jupyter-resolve"
    assert json.loads((panel / "package.json").read_text())["name"] == "jupyter-resolve"
    assert (panel / "install.json").is_file()


def test_no_c_compiler_names_the_package_to_install(dists: Dists, tmp_path: Path) -> None:
    tools = tool_dir(tmp_path / "tools", compiler=False)
    python = fresh_venv(tmp_path / "venv")
    with pytest.raises(subprocess.CalledProcessError) as failed:
        pip_install(python, dists.sdist, env=_source_build_env(tools))
    output = failed.value.stdout + failed.value.stderr
    assert "needs a C compiler" in output, output
    assert "apt-get install build-essential" in output
