"""The architecture page's recipes are true (issue 45.7): "Adding a tool" is done, as the page
says and with the files it shows (tests/fixtures/toy_tool), to a copy of the package, and the
copy's drift check passes and its server calls the new tool; "Adding a provider" shows the toy
package that tests/jupyter_resolve/providers/test_registry.py installs and chats with."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import httpx

from tests.conftest import parse_sse_block
from tests.launcher import REPO, JupyterServer

PAGE = REPO / "docs" / "architecture.md"
TOY_TOOL = REPO / "tests" / "fixtures" / "toy_tool"
TOY_PROVIDER = REPO / "tests" / "fixtures" / "toy_provider"


def recipe(title: str) -> str:
    """The page's section ``title``, up to the next heading of its level."""
    text = PAGE.read_text()
    start = text.index(f"### {title}")
    end = text.find("\n### ", start + 1)
    return text[start : end if end != -1 else None]


def shown_files(section: str) -> list[str]:
    """The files a section includes (``{literalinclude}`` paths, relative to the repository)."""
    return [
        str((PAGE.parent / path).resolve().relative_to(REPO))
        for path in re.findall(r"```\{literalinclude\} (\S+)", section)
    ]


def add_the_tool(tree: Path) -> None:
    """The recipe's steps 1 and 2, on ``tree`` (a copy of jupyter_resolve and kernel_tools)."""
    schemas = tree / "kernel_tools" / "builtin-tools.json"
    data = json.loads(schemas.read_text())
    data["tools"].append(json.loads((TOY_TOOL / "schema.json").read_text()))
    schemas.write_text(json.dumps(data, indent=1))
    shutil.copy(TOY_TOOL / "word_count.py", tree / "kernel_tools" / "word_count.py")
    registry = tree / "kernel_tools" / "registry.py"
    text = registry.read_text()
    text = text.replace(
        "from .result import Result\n", "from .result import Result\nfrom . import word_count\n", 1
    )
    entry = (TOY_TOOL / "registry.txt").read_text()
    text = text.replace(
        "REGISTRY: dict[str, Tool] = {\n", "REGISTRY: dict[str, Tool] = {\n" + entry, 1
    )
    registry.write_text(text)


def copy_of_the_package(into: Path) -> Path:
    tree = into / "tree"
    skip = shutil.ignore_patterns("__pycache__", "labextension", "*.pyc")
    for name in ("jupyter_resolve", "kernel_tools"):
        shutil.copytree(REPO / name, tree / name, ignore=skip, symlinks=True)
    return tree


def test_the_tool_recipe_shows_the_files_the_test_adds() -> None:
    section = recipe("Adding a tool")
    shown = shown_files(section)
    for name in ("schema.json", "word_count.py", "registry.txt"):
        assert str((TOY_TOOL / name).relative_to(REPO)) in shown, name
    for step in ("kernel_tools/builtin-tools.json", "kernel_tools/registry.py", "tools.md"):
        assert step in section, step


def test_a_tool_added_by_the_recipe_is_checked_and_called(tmp_path: Path) -> None:
    tree = copy_of_the_package(tmp_path)
    add_the_tool(tree)
    env = {**os.environ, "PYTHONPATH": str(tree)}
    check = subprocess.run(
        [sys.executable, "-c", "from jupyter_resolve.cli import main; main()", "check"],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert check.returncode == 0, check.stdout + check.stderr
    assert "word_count" in check.stdout

    script = tmp_path / "script.jsonl"
    turns = [
        {
            "content": "",
            "tool_calls": [{"name": "word_count", "arguments": {"text": "to be or not to be"}}],
        },
        {"content": "Counted."},
    ]
    script.write_text("\n".join(json.dumps(t) for t in turns) + "\n")
    argv = ["--Resolve.provider=scripted", f"--Resolve.script={script}"]
    server_env = {"PYTHONPATH": str(tree)}
    with JupyterServer(tmp_path / "server", argv=argv, env=server_env, cwd=tree) as server:
        with httpx.Client(timeout=120, trust_env=False) as client:
            answer = client.post(
                f"{server.url}/resolve/api/chat",
                json={"messages": [{"role": "user", "content": "count them"}]},
                headers=server.headers,
            )
    events = [e for e in map(parse_sse_block, answer.text.split("\n\n")) if e is not None]
    started = next(e.data for e in events if e.event == "run.started")
    assert "word_count" in started["tools"]
    done = next(e.data for e in events if e.event == "tool.completed")
    assert done["name"] == "word_count" and done["ok"] is True, done
    assert "6 words; the most frequent: 'to' (2 times)" in done["output"]


def test_the_provider_recipe_shows_the_package_the_registry_test_installs() -> None:
    section = recipe("Adding a provider")
    shown = shown_files(section)
    for name in ("toy_provider.py", "pyproject.toml"):
        assert str((TOY_PROVIDER / name).relative_to(REPO)) in shown, name
    assert "jupyter_resolve.providers" in section
