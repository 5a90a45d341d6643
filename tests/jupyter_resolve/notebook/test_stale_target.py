"""A replace proposal is refused when its target cell changed since the person saw the diff
(issue 40.2, DESIGN 9.2): the decision names what was seen (``seen: {cell_id, sha256}``), the
answer to a stale one is 409 ``stale_target`` with the cell's current source, and the proposal's
GET gives that source too. Here without a collaboration room (the saved file is the notebook);
tests/jupyter_resolve/collab does the same under a live room."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Server
from tests.jupyter_resolve.notebook.live import make_notebook
from tests.jupyter_resolve.notebook.test_proposals import propose, waiting_proposal
from tests.scripting import script

pytestmark = pytest.mark.timeout(120)
CELLS = [{"cell_type": "code", "source": "x = 30"}]


def digest(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()


def edit_saved_cell(root: Path, path: str, source: str) -> None:
    """Someone edits the target cell and saves, after the card was shown."""
    notebook = json.loads((root / path).read_text())
    notebook["cells"][0]["source"] = source
    (root / path).write_text(json.dumps(notebook))


async def test_a_stale_replace_is_refused_with_the_current_source(
    server: Server, gateway: Any, jp_root_dir: Path, tmp_path: Path
) -> None:
    path = make_notebook(jp_root_dir)
    script(gateway, tmp_path, propose(cells=CELLS, replace_cell_id="cell-1"), {"content": "ok"})
    chat = asyncio.create_task(server.chat("make x 30", notebook=path))
    run_id, proposal_id = await waiting_proposal(gateway)
    url = f"/resolve/api/runs/{run_id}/proposals/{proposal_id}"
    shown = await server.get(url)
    assert shown.status_code == 200, shown.text
    assert shown.json()["current"] == {
        "cell_id": "cell-1",
        "source": "x = 3",
        "sha256": digest("x = 3"),
    }
    assert shown.json()["replace_cell_id"] == "cell-1" and shown.json()["state"] == "waiting"

    edit_saved_cell(jp_root_dir, path, "x = 3  # B's edit")
    seen = {"cell_id": "cell-1", "sha256": digest("x = 3")}
    stale = await server.post(url, {"decision": "accept", "seen": seen})
    assert stale.status_code == 409, stale.text
    assert stale.json()["error"]["code"] == "stale_target"
    assert stale.json()["current"]["source"] == "x = 3  # B's edit"
    followed = await server.get(url)
    assert followed.json()["current"]["source"] == "x = 3  # B's edit"
    assert followed.json()["state"] == "waiting"  # still for a person to decide

    wrong_cell = await server.post(
        url, {"decision": "accept", "seen": {**seen, "cell_id": "cell-9"}}
    )
    assert wrong_cell.status_code == 400

    seen_now = {"cell_id": "cell-1", "sha256": digest("x = 3  # B's edit")}
    accepted = await server.post(url, {"decision": "accept", "seen": seen_now})
    assert accepted.status_code == 200, accepted.text
    assert accepted.json()["decision"] == "accepted"
    streamed = await chat
    assert streamed.of("notebook.decision")[0]["decision"] == "accepted"


async def test_a_rejection_needs_no_seen_and_a_deleted_target_is_stale(
    server: Server, gateway: Any, jp_root_dir: Path, tmp_path: Path
) -> None:
    path = make_notebook(jp_root_dir)
    script(gateway, tmp_path, propose(cells=CELLS, replace_cell_id="cell-1"), {"content": "ok"})
    chat = asyncio.create_task(server.chat("make x 30", notebook=path))
    run_id, proposal_id = await waiting_proposal(gateway)
    url = f"/resolve/api/runs/{run_id}/proposals/{proposal_id}"
    notebook = json.loads((jp_root_dir / path).read_text())
    notebook["cells"] = []
    (jp_root_dir / path).write_text(json.dumps(notebook))
    seen = {"cell_id": "cell-1", "sha256": digest("x = 3")}
    gone = await server.post(url, {"decision": "accept", "seen": seen})
    assert gone.status_code == 409 and gone.json()["error"]["code"] == "stale_target"
    assert gone.json()["current"] == {"cell_id": "cell-1", "source": None, "sha256": None}
    rejected = await server.post(url, {"decision": "reject", "seen": seen})
    assert rejected.status_code == 200 and rejected.json()["decision"] == "rejected"
    await chat


async def test_a_page_s_own_unsaved_edit_is_no_stale_target(
    server: Server, gateway: Any, jp_root_dir: Path, tmp_path: Path
) -> None:
    """Without collaboration the card diffs against the page's model: ``seen`` is the person's
    unsaved edit, ``base_sha256`` the source the proposal carried. The saved file unchanged
    since (it reads as the base): accepted; changed (another page saved): 409; a base that is
    not the proposal's counts for nothing; no base: the check of before."""
    path = make_notebook(jp_root_dir)
    proposals = [propose(cells=CELLS, replace_cell_id="cell-1") for _ in range(2)]
    script(gateway, tmp_path, *[p for p in proposals for p in (p, {"content": "ok"})])
    mine = {"cell_id": "cell-1", "sha256": digest("x = 3  # my unsaved edit")}
    base = {**mine, "base_sha256": digest("x = 3")}

    chat = asyncio.create_task(server.chat("make x 30", notebook=path))
    run_id, proposal_id = await waiting_proposal(gateway)
    url = f"/resolve/api/runs/{run_id}/proposals/{proposal_id}"
    old_client = await server.post(url, {"decision": "accept", "seen": mine})
    assert old_client.status_code == 409, old_client.text  # no base: as before
    accepted = await server.post(url, {"decision": "accept", "seen": base})
    assert accepted.status_code == 200, accepted.text
    assert accepted.json()["decision"] == "accepted"
    await chat

    chat = asyncio.create_task(server.chat("make x 30", notebook=path))
    run_id, proposal_id = await waiting_proposal(gateway)
    url = f"/resolve/api/runs/{run_id}/proposals/{proposal_id}"
    edit_saved_cell(jp_root_dir, path, "x = 3  # B's saved edit")
    stale = await server.post(url, {"decision": "accept", "seen": base})
    assert stale.status_code == 409, stale.text
    assert stale.json()["error"]["code"] == "stale_target"
    assert stale.json()["current"]["source"] == "x = 3  # B's saved edit"
    # a base that the proposal did not carry (here the file's source now) is no excuse
    forged = {**mine, "base_sha256": digest("x = 3  # B's saved edit")}
    refused = await server.post(url, {"decision": "accept", "seen": forged})
    assert refused.status_code == 409, refused.text
    rejected = await server.post(url, {"decision": "reject"})
    assert rejected.status_code == 200
    await chat
