"""Two people on one real server (issue 44.1): alice may do everything, bob only the resource
``resolve`` (an IdentityProvider and an Authorizer of the test: ``people.py``). Bob's code cannot
read the server root or its hidden files, with bubblewrap (his sandbox mounts no root) and
without it (he is offered no ``python`` or ``shell``); alice's reads the root but no hidden path
at any depth (sandboxed). A kernel alice's run used is not bob's: his run in her session finds
none of her variables. An external agent's terminal (ACP ``terminal/*``, run as the shell tool)
follows the same rule: alice's reads what her python does, bob's reaches nothing.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jupyter_resolve.scratch.sandbox import bwrap_available
from tests.conftest import REPO, Server
from tests.jupyter_resolve.people import people_config
from tests.launcher import JupyterServer

pytestmark = pytest.mark.timeout(300)

AGENT = Path(__file__).parent / "acp" / "agents" / "bench_agent.py"
ALICE, BOB = "alice-token-0123456789", "bob-token-0123456789"
FULL = {"contents_read": True, "contents_write": True, "kernels_execute": True}
NONE = {"contents_read": False, "contents_write": False, "kernels_execute": False}
FILES = {  # under the server root; names starting with "hidden" are hidden paths
    "notebook": ("secret.ipynb", "MARK-notebook"),
    "hidden-git": ("proj/.git/config", "MARK-git"),
    "hidden-env": (".env", "MARK-env"),
    "hidden-deep": ("data/2026/.credentials", "MARK-deep"),
}
ROOT_MARKS = {"MARK-notebook"}
HIDDEN_MARKS = {mark for name, (_, mark) in FILES.items() if name.startswith("hidden")}


@pytest.fixture(params=["bwrap", "none"])
def jupyter(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[JupyterServer]:
    if request.param == "bwrap" and not bwrap_available():
        pytest.skip("bubblewrap cannot create namespaces on this machine")
    # a root outside the folders the sandbox hides anyway (the temporary ones, the home)
    outside = REPO / "test-output" / "roots"
    outside.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(dir=outside))
    for path, text in FILES.values():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    agent = {"command": [sys.executable, str(AGENT)], "env": {"BENCH_STATE": str(tmp_path)}}
    resolve = {"sandbox": request.param, "acp_agents": {"bench": agent}, "acp_terminal": True}
    config = {**people_config({"alice": (ALICE, ["*"]), "bob": (BOB, ["resolve"])})}
    config["Resolve"] = resolve
    try:
        with JupyterServer(tmp_path / "server", root=root, config=config, ready="health") as srv:
            srv.sandbox = request.param  # type: ignore[attr-defined]
            yield srv
    finally:
        shutil.rmtree(root, ignore_errors=True)


def probe(root: Path, extra: str = "") -> str:
    """A chat the offline model answers by running its fenced python: every file's text."""
    paths = [str(root / path) for path, _ in FILES.values()]
    code = (
        f"for p in {paths!r}:\n"
        "    try:\n"
        "        print(open(p).read())\n"
        "    except Exception as e:\n"
        "        print(type(e).__name__)\n" + extra
    )
    return f"```python\n{code}```"


def marks(text: str) -> set[str]:
    return {mark for _, mark in FILES.values() if mark in text}


async def chat(server: Server, content: str, **extra: Any) -> tuple[dict[str, Any], str]:
    """run.started and everything the run's tools printed or returned."""
    stream = await server.chat(content, **extra)
    assert stream.status == 200, stream.body
    outputs = [c["output"] for c in stream.of("tool.completed")]
    outputs += [o.get("text", "") for o in stream.of("tool.output")]
    return stream.of("run.started")[0], "\n".join(outputs)


async def test_bobs_code_reads_neither_the_root_nor_hidden_files(jupyter: JupyterServer) -> None:
    alice, bob = Server(jupyter.url, ALICE), Server(jupyter.url, BOB)
    sandboxed = jupyter.sandbox == "bwrap"  # type: ignore[attr-defined]
    started, seen = await chat(alice, probe(jupyter.root, "x = 'MARK-kept'\n"), session_id="s")
    assert started["permissions"] == FULL and "python" in started["tools"]
    assert ROOT_MARKS <= marks(seen)
    if sandboxed:
        assert not marks(seen) & HIDDEN_MARKS, seen  # not at any depth
    started, seen = await chat(bob, probe(jupyter.root), session_id="s-bob")
    assert started["permissions"] == NONE
    assert ("python" in started["tools"]) is sandboxed  # unsandboxed: not offered at all
    assert ("shell" in started["tools"]) is sandboxed
    assert marks(seen) == set(), seen
    # bob in the session alice's run used: her kernel (its variables) is not his
    later = await bob.chat(probe(jupyter.root, "print(globals().get('x'))\n"), session_id="s")
    assert "MARK" not in str([e.data for e in later.events])


async def test_an_agents_terminal_follows_its_callers_permissions(
    jupyter: JupyterServer,
) -> None:
    alice, bob = Server(jupyter.url, ALICE), Server(jupyter.url, BOB)
    command = "terminal cat " + " ".join(str(jupyter.root / p) for p, _ in FILES.values())
    stream = await alice.chat(command, agent="bench", session_id="a-term")
    assert ROOT_MARKS <= marks(stream.text()), stream.text()
    if jupyter.sandbox == "bwrap":  # type: ignore[attr-defined]
        assert not marks(stream.text()) & HIDDEN_MARKS
    refused_or_run = await bob.chat(command, agent="bench", session_id="b-term")
    assert "MARK" not in str([e.data for e in refused_or_run.events]) + str(refused_or_run.body)
