"""The four tool lists (DESIGN 3.4): the pure check, and `jupyter resolve check` on real copies."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from jupyter_resolve.contracts.drift import compute_drift, soul_drift
from tests.conftest import Server

REPO = Path(__file__).resolve().parents[2]


def test_equal_lists_have_no_drift() -> None:
    same = ["a", "b"]
    lists = {"schemas": same, "allow": same, "bridge": same, "implementations": same}
    assert compute_drift(lists) == []


def test_every_pairwise_difference_is_named() -> None:
    drift = compute_drift(
        {
            "schemas": ["a", "b"],
            "allow": ["a", "b"],
            "bridge": ["a"],
            "implementations": ["a", "b", "c"],
        }
    )
    assert "'b' is in schemas but not in bridge" in drift
    assert "'b' is in allow but not in bridge" in drift
    assert "'c' is in implementations but not in schemas" in drift  # implemented, not exposed
    assert len(drift) == len(set(drift))


def test_soul_tools_must_be_allowed() -> None:
    assert soul_drift({"planner": ["read_file", "python"]}, ["read_file"]) == [
        "soul 'planner' names 'python', which is not an allowed tool"
    ]


def run_check(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(root), "JUPYTER_CONFIG_DIR": str(root / "cfg")}
    return subprocess.run(
        [sys.executable, "-c", "from jupyter_resolve.cli import main; main()", "check", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    for package in ("jupyter_resolve", "kernel_tools"):
        shutil.copytree(
            REPO / package,
            tmp_path / package,
            ignore=shutil.ignore_patterns("__pycache__", "bin", "labextension"),
        )
    return tmp_path


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


def schema_names(root: Path) -> list[str]:
    import json

    data = json.loads((root / "kernel_tools" / "builtin-tools.json").read_text())
    return [t["name"] for t in data["tools"]]


def test_clean_copy_passes(copy: Path) -> None:
    result = run_check(copy)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no drift" in result.stdout


def test_schema_missing_is_drift(copy: Path) -> None:
    import json

    path = copy / "kernel_tools" / "builtin-tools.json"
    data = json.loads(path.read_text())
    data["tools"] = [t for t in data["tools"] if t["name"] != "list_dir"]
    path.write_text(json.dumps(data))
    result = run_check(copy)
    assert result.returncode == 1
    # the default allow list follows the schemas: the implementation is left unexposed
    assert "'list_dir' is in implementations but not in schemas" in result.stdout


def test_allow_list_missing_is_drift(copy: Path) -> None:
    # the default allow list is every schema (tools/catalog.py): only a configured one can miss
    names = [n for n in schema_names(copy) if n != "search_files"]
    result = run_check(copy, *(f"--Resolve.allowed_tools={n}" for n in names))
    assert result.returncode == 1
    assert "'search_files' is in schemas but not in allow" in result.stdout


def test_configured_allow_list_can_drift_too(copy: Path) -> None:
    result = run_check(copy, "--Resolve.allowed_tools=python", "--Resolve.allowed_tools=nope")
    assert result.returncode == 1
    assert "'nope' is in allow but not in schemas" in result.stdout


def test_bridge_missing_is_drift(copy: Path) -> None:
    edit(
        copy / "jupyter_resolve" / "tools" / "catalog.py",
        "if schema.name in allow\n",
        "if schema.name in allow and schema.name != 'shell'\n",
    )
    result = run_check(copy)
    assert result.returncode == 1
    assert "'shell' is in schemas but not in bridge" in result.stdout


def test_implementation_missing_is_drift(copy: Path) -> None:
    registry = copy / "kernel_tools" / "registry.py"
    registry.write_text(registry.read_text() + "\nREGISTRY.pop('edit_file')\n")
    result = run_check(copy)
    assert result.returncode == 1
    assert "'edit_file' is in schemas but not in implementations" in result.stdout


def test_a_gateway_tool_missing_is_drift(copy: Path) -> None:
    edit(copy / "jupyter_resolve" / "runs" / "builtin_tools.py", '    "web_fetch": fetch,\n', "")
    result = run_check(copy)
    assert result.returncode == 1
    assert "'web_fetch' is in schemas but not in implementations" in result.stdout


async def test_server_refuses_chat_on_drift_and_health_says_why(
    server: Server, gateway: Any
) -> None:
    gateway.config.allowed_tools = ["python", "no_such_tool"]
    response = await server.post(
        "/resolve/api/chat", {"messages": [{"role": "user", "content": "hi"}]}
    )
    assert response.status_code == 503
    error = response.json()["error"]
    assert error["code"] == "tool_drift" and "no_such_tool" in error["message"]
    health = (await server.get("/resolve/api/health")).json()
    assert health["ok"] is False
    assert any("no_such_tool" in line for line in health["drift"])


def test_a_soul_naming_a_tool_that_is_not_allowed_is_drift(copy: Path) -> None:
    souls = copy / ".resolve" / "souls"
    souls.mkdir(parents=True)
    (souls / "rogue.md").write_text(
        "---\nname: rogue\nrole: specialist\ndescription: x\ntools: [python, teleport]\n---\nHi\n"
    )
    result = run_check(copy)
    assert result.returncode == 1
    assert "soul 'rogue' names 'teleport', which is not an allowed tool" in result.stdout
