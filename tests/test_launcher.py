"""One way to start things in tests (issue 32, point 4): ``tests/launcher.py`` is the only place
in ``tests/`` and ``bench/`` that starts a ``jupyter server`` (or ``jupyter lab``) process or
picks a free port. Read from the sources' syntax trees; the browser tests' ``lab.mjs`` is
JavaScript (node's test runner cannot import Python) and keeps its own launcher."""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterator
from pathlib import Path

from tests.launcher import REPO

LAUNCHER = REPO / "tests" / "launcher.py"
SPAWNERS = {
    "Popen",
    "run",
    "call",
    "check_call",
    "check_output",
    "create_subprocess_exec",
    "create_subprocess_shell",
    "start_process",
    "execv",
    "execvp",
}
SERVER_MODULES = {"jupyter_server", "jupyter-server", "jupyterlab", "jupyter-lab"}


def _name(func: ast.expr) -> str:
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _words(node: ast.AST) -> list[str]:
    return [
        n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    ]


def _starts_a_server(node: ast.AST) -> bool:
    """An argv naming a Jupyter server (``-m jupyter_server``, ``jupyter lab``), or a subprocess
    call given one, or given a server's ``--port``."""
    if isinstance(node, (ast.List, ast.Tuple)):
        words = _words(node)
        pairs = set(itertools.pairwise(words))  # neighbours, also through a starred tuple
        return any(("-m", m) in pairs for m in SERVER_MODULES) or bool(
            {("jupyter", "server"), ("jupyter", "lab")} & pairs
        )
    if not isinstance(node, ast.Call) or _name(node.func) not in SPAWNERS:
        return False
    words = [w for arg in [*node.args, *(k.value for k in node.keywords)] for w in _words(arg)]
    return any(
        w.rsplit("/", 1)[-1] in SERVER_MODULES or w.startswith(("--ServerApp.port", "--port="))
        for w in words
    )


def _picks_a_port(node: ast.AST) -> bool:
    """A function named like ``free_port``, or a ``bind`` to port 0 read back by
    ``getsockname`` (the same thing, inline)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and "free_port" in node.name:
        return True
    if not isinstance(node, ast.With):
        return False
    calls = [n for n in ast.walk(node) if isinstance(n, ast.Call)]
    binds_zero = any(
        _name(c.func) == "bind"
        and c.args
        and isinstance(c.args[0], ast.Tuple)
        and isinstance(c.args[0].elts[-1], ast.Constant)
        and c.args[0].elts[-1].value == 0
        for c in calls
    )
    return binds_zero and any(_name(c.func) == "getsockname" for c in calls)


def offences(source: str) -> Iterator[tuple[int, str]]:
    """(line, what) for each server start or free-port helper in ``source``."""
    for node in ast.walk(ast.parse(source)):
        if _starts_a_server(node):
            yield getattr(node, "lineno", 0), "starts a Jupyter server"
        elif _picks_a_port(node):
            yield getattr(node, "lineno", 0), "picks a free port"


def sources() -> Iterator[Path]:
    for folder in ("tests", "bench"):
        for path in sorted((REPO / folder).rglob("*.py")):
            if (
                path not in (LAUNCHER, Path(__file__).resolve())
                and "node_modules" not in path.parts
            ):
                yield path


def test_only_the_launcher_starts_servers_or_picks_ports() -> None:
    found = [
        f"{path.relative_to(REPO)}:{line}: {what} (use tests.launcher)"
        for path in sources()
        for line, what in offences(path.read_text())
    ]
    assert found == []


def test_the_check_sees_each_kind_of_copy() -> None:
    """The check above would fail on a copy of either of the launcher's jobs: it finds both in
    the launcher itself, and each shape the old copies had."""
    assert {what for _, what in offences(LAUNCHER.read_text())} == {
        "starts a Jupyter server",
        "picks a free port",
    }
    copies = {
        "popen": 'subprocess.Popen([sys.executable, "-m", "jupyter_server", f"--port={p}"])',
        "starred": 'subprocess.Popen([python, *("-m", "jupyter_server"), "--no-browser"])',
        "lab": 'subprocess.run(["jupyter", "lab", "--no-browser"], check=True)',
        "port": 'start_process([exe, *module, f"--ServerApp.port={port}"])',
        "helper": "def _free_port() -> int:\n    return 0",
        "inline": (
            "with socket.socket() as s:\n"
            '    s.bind(("127.0.0.1", 0))\n'
            "    port = s.getsockname()[1]"
        ),
    }
    for name, source in copies.items():
        assert list(offences(source)), name
    # and not on what is no copy: a kernel, a server that keeps its socket, other processes
    fine = (
        'subprocess.run([sys.executable, "-m", "ipykernel_launcher", "-f", path])\n'
        "server = await asyncio.start_server(handle, '127.0.0.1', 0)\n"
        'subprocess.Popen([litellm, "--config", "config.yaml", "--port", str(port)])\n'
    )
    assert list(offences(fine)) == []
