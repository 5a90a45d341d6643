"""A notebook an external agent writes over ``fs/write_text_file`` (issue 36 point 4, DESIGN
9.2): never written, its changes proposed to a person through the run's ``notebook.proposal``
events and decided with the real decision endpoint; a text that is no notebook is refused.
A real ``jupyter server`` hosts the SDK agent of ``agents/bench_agent.py``."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest

from tests.conftest import SSE, Server, Stream
from tests.jupyter_resolve.acp.test_acp_runs import AGENTS, ends_once, rest_of
from tests.launcher import JupyterServer

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[JupyterServer, Server]]:
    work = tmp_path_factory.mktemp("acp-nb")
    agents = {
        "bench": {
            "command": [sys.executable, str(AGENTS / "bench_agent.py")],
            "env": {"BENCH_STATE": str(work / "agent-state")},
        }
    }
    config = {"Resolve": {"acp_agents": agents, "approval_timeout": 60.0}}
    with JupyterServer(work, config=config, ready="health") as jupyter:
        yield jupyter, Server(jupyter.url, jupyter.token)


def a_notebook(root: Path, name: str) -> Path:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell("x = 3", id="cell-1"),
        nbformat.v4.new_markdown_cell("# the answer", id="cell-2"),
        nbformat.v4.new_code_cell("print(x)", id="cell-3"),
    ]
    path = root / name
    nbformat.write(notebook, path)
    return path


def proposals_seen(count: int) -> object:
    seen: list[SSE] = []

    def enough(event: SSE) -> bool:
        if event.event == "notebook.proposal":
            seen.append(event)
        return len(seen) == count

    return enough


async def proposed(server: Server, path: Path) -> tuple[str, dict[str, dict[str, object]]]:
    """The agent writes the notebook with a changed cell and a new one: its run's id and its
    proposals by kind, once both wait for a person."""
    first = await server.chat(f"notebook {path} edit", agent="bench", until=proposals_seen(2))
    assert first.status == 200, first.body
    by_kind = {
        ("replace" if p.get("replace_cell_id") else "new"): p for p in first.of("notebook.proposal")
    }
    return first.events[0].data["run_id"], by_kind


async def decide(server: Server, run_id: str, proposal_id: object, decision: str) -> None:
    path = f"/resolve/api/runs/{run_id}/proposals/{proposal_id}"
    answer = await server.post(path, {"decision": decision, "reason": "not now"})
    assert answer.status_code == 200, answer.text
    assert answer.json()["decision"] == ("accepted" if decision == "accept" else "rejected")


async def test_a_written_notebook_is_proposed_and_a_person_accepts(
    served: tuple[JupyterServer, Server],
) -> None:
    jupyter, server = served
    path = a_notebook(jupyter.root, "analysis.ipynb")
    before = path.read_bytes()
    run_id, by_kind = await proposed(server, path)
    replace, new = by_kind["replace"], by_kind["new"]
    assert replace["notebook"] == "analysis.ipynb" and replace["replace_cell_id"] == "cell-1"
    assert replace["cells"] == [{"cell_type": "code", "source": "x = 4"}]
    assert replace["replaced_source"] == "x = 3"  # the diff card's base
    assert new["after_cell_id"] == "cell-2" and "replace_cell_id" not in new
    assert new["cells"] == [{"cell_type": "code", "source": "print(x * 2)"}]
    assert path.read_bytes() == before  # nothing written while the person has not decided
    view = await server.get(f"/resolve/api/runs/{run_id}/proposals/{replace['proposal_id']}")
    assert view.json()["current"]["source"] == "x = 3"
    for proposal in (replace, new):
        await decide(server, run_id, proposal["proposal_id"], "accept")
    stream = await rest_of(server, run_id)
    decisions = stream.of("notebook.decision")
    assert sorted(d["proposal_id"] for d in decisions) == sorted(
        [replace["proposal_id"], new["proposal_id"]]
    )
    assert {d["decision"] for d in decisions} == {"accepted"}
    text = stream.text()
    assert text.startswith("wrote meta:"), text
    meta = json.loads(text.removeprefix("wrote meta:"))["jupyter-resolve"]
    assert [(p["kind"], p["cell_id"], p["accepted"]) for p in meta["proposals"]] == [
        ("replace", "cell-1", True),
        ("new", "cell-2", True),
    ]
    calls = {d["call_id"]: d for d in stream.of("tool.completed")}
    write = next(d for d in calls.values() if d["name"] == "fs.write_text_file")
    assert write["ok"] is True and "is not written by fs/write_text_file" in write["output"]
    proposes = [d for d in calls.values() if d["name"] == "notebook_propose"]
    assert len(proposes) == 2 and all(d["call_id"].startswith(write["call_id"]) for d in proposes)
    # the server never writes the notebook's file: the person's JupyterLab puts accepted cells
    # into the open notebook (labextension/src/decisions.ts), which saves it
    assert path.read_bytes() == before
    ends_once(stream, "stop")


async def test_a_rejected_change_is_an_error_for_the_agent(
    served: tuple[JupyterServer, Server],
) -> None:
    jupyter, server = served
    path = a_notebook(jupyter.root, "rejected.ipynb")
    before = path.read_bytes()
    run_id, by_kind = await proposed(server, path)
    await decide(server, run_id, by_kind["replace"]["proposal_id"], "reject")
    await decide(server, run_id, by_kind["new"]["proposal_id"], "accept")
    stream = await rest_of(server, run_id)
    text = stream.text()
    assert text.startswith("error:") and "not accepted" in text, text
    assert "cell 'cell-1' changed: a person rejected the proposal" in text
    assert "not now" in text  # the person's reason reaches the agent
    assert '"accepted": false' in text  # and the same as data
    assert path.read_bytes() == before
    ends_once(stream, "stop")


@pytest.mark.parametrize(
    ("name", "mode", "why"),
    [
        ("broken.ipynb", "bad", "is not JSON"),
        ("missing.ipynb", "new", "no notebook 'missing.ipynb'"),
    ],
)
async def test_a_text_that_is_no_notebook_is_refused(
    served: tuple[JupyterServer, Server], name: str, mode: str, why: str
) -> None:
    jupyter, server = served
    path = jupyter.root / name
    if mode == "bad":
        a_notebook(jupyter.root, name)
    before = path.read_bytes() if path.exists() else None
    stream: Stream = await server.chat(f"notebook {path} {mode}", agent="bench")
    assert stream.text().startswith("error:") and why in stream.text(), stream.text()
    assert stream.of("notebook.proposal") == []
    done = [d for d in stream.of("tool.completed") if d["name"] == "fs.write_text_file"]
    assert done[0]["ok"] is False and why in done[0]["output"]
    assert (path.read_bytes() if path.exists() else None) == before
    ends_once(stream, "stop")
