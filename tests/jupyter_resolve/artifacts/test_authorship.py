"""Who wrote each cell (issue 49.3): accepting a proposal answers each cell's ``metadata.resolve``
(run, model, who accepted, when, the accepted source's digest); a cell carrying it reads as
edited once its source changes, and a notebook's crate exports its cells' authorship."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from jupyter_resolve.contracts.authorship import cell_authorship
from tests.conftest import Server
from tests.jupyter_resolve.artifacts.crates import graph, seed_cache, unzip
from tests.jupyter_resolve.artifacts.test_crate import validate
from tests.jupyter_resolve.notebook.live import user_notebook
from tests.jupyter_resolve.notebook.test_proposals import decide_when_asked, propose
from tests.scripting import script

pytestmark = pytest.mark.timeout(240)

CELLS = [
    {"cell_type": "markdown", "source": "## Fourteen times x"},
    {"cell_type": "code", "source": "y = x * 14"},
]


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_an_edit_flips_edited_and_undoing_it_flips_it_back() -> None:
    resolve = {
        "authorship": 1,
        "run_id": "run-1",
        "call_id": "call_1",
        "proposal_id": "proposal-1",
        "model": "scripted",
        "accepted_by": "ada",
        "accepted_at": "2026-12-04T10:00:00.000+00:00",
        "source_sha256": sha("y = x * 14"),
        "artifact_id": "art-000000000000000000000000",  # other keys stay ours to ignore
    }
    cell = {"id": "c1", "source": "y = x * 14", "metadata": {"resolve": resolve}}
    found = cell_authorship(cell)
    assert found is not None and found["edited"] is False and found["model"] == "scripted"
    assert "artifact_id" not in found and found["cell_id"] == "c1"
    assert cell_authorship({**cell, "source": "y = x * 15"})["edited"] is True  # type: ignore[index]
    assert cell_authorship({**cell, "source": ["y = x ", "* 14"]})["edited"] is False  # type: ignore[index]
    older = {"metadata": {"resolve": {"run_id": "r", "call_id": "c", "proposal_id": "p"}}}
    assert cell_authorship(older)["edited"] is None  # type: ignore[index]
    assert cell_authorship({"metadata": {"resolve": {"artifact_id": "art-x"}}}) is None
    assert cell_authorship({"metadata": {}}) is None


async def put_notebook(server: Server, path: str, content: dict[str, Any]) -> None:
    body = {"type": "notebook", "format": "json", "content": content}
    async with server.client() as client:
        response = await client.put(f"/api/contents/{path}", json=body, headers=server.auth)
    assert response.status_code in (200, 201), response.text


async def notebook_authorship(server: Server, path: str, tmp: Path) -> list[dict[str, Any]]:
    response = await server.get("/resolve/api/artifacts/crate", params={"notebook": path})
    assert response.status_code == 200, response.text
    folder = unzip(response.content, tmp)
    entities = graph(folder)
    table = json.loads((folder / "notebook-authorship.json").read_text())
    for cell in table["cells"]:
        assert entities[f"#cell-{cell['cell_id']}"]["@type"] == "CreativeWork"
    cells: list[dict[str, Any]] = table["cells"]
    return cells


async def test_accepted_cells_carry_authorship_and_the_notebook_crate_exports_it(
    server: Server, gateway: Any, jp_serverapp: Any, jp_root_dir: Path, tmp_path: Path
) -> None:
    path, _ = await user_notebook(server, jp_serverapp, jp_root_dir)
    script(gateway, tmp_path, propose(notebook=path, cells=CELLS), {"content": "ok"})
    decider = asyncio.create_task(decide_when_asked(server, gateway, {"decision": "accept"}))
    streamed = await server.chat("add cells", notebook=path)
    answer = await decider
    assert answer.status_code == 200, answer.text
    authorship = answer.json()["authorship"]
    run_id = streamed.of("run.started")[0]["run_id"]
    assert [a["source_sha256"] for a in authorship] == [sha(c["source"]) for c in CELLS]
    for entry in authorship:
        assert entry["authorship"] == 1 and entry["run_id"] == run_id
        assert entry["model"] == "scripted" and entry["accepted_by"]
        assert entry["accepted_by_name"] and entry["accepted_at"].endswith("+00:00")
        assert entry["edited_on_accept"] is False and entry["proposal_id"].startswith("proposal")

    # the panel puts them into the cells it inserts (labextension/src/proposal.ts), then saves
    async with server.client() as client:
        model = (await client.get(f"/api/contents/{path}", headers=server.auth)).json()
    content = model["content"]
    for i, (cell, entry) in enumerate(zip(CELLS, authorship, strict=True)):
        new = {"id": f"agent-{i}", "metadata": {"resolve": entry}, **cell}
        if cell["cell_type"] == "code":
            new |= {"outputs": [], "execution_count": None}
        content["cells"].append(new)
    await put_notebook(server, path, content)
    cells = await notebook_authorship(server, path, tmp_path / "before")
    assert [(c["cell_id"], c["edited"]) for c in cells] == [("agent-0", False), ("agent-1", False)]

    # the notebook's crate conforms to the profile too
    verdict = validate(tmp_path / "before", seed_cache(tmp_path / "http-cache"))
    assert verdict["passed"], verdict["issues"]

    content["cells"][-1]["source"] = "y = x * 15  # the person's edit"
    await put_notebook(server, path, content)
    cells = await notebook_authorship(server, path, tmp_path / "after")
    assert [(c["cell_id"], c["edited"]) for c in cells] == [("agent-0", False), ("agent-1", True)]
    assert cells[1]["model"] == "scripted" and cells[1]["run_id"] == run_id
