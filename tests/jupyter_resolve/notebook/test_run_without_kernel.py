"""Accept and run on a notebook with no running kernel (issue 40.3): the server starts the kernel
the notebook names, in a session for its path (a page opening the notebook attaches to it), and
runs the accepted cells there; before, the first try was a 409 "no kernel is running"."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Server
from tests.jupyter_resolve.notebook.live import make_notebook
from tests.jupyter_resolve.notebook.test_proposals import propose, waiting_proposal
from tests.scripting import script

pytestmark = pytest.mark.timeout(180)


async def test_accept_and_run_starts_the_notebooks_kernel(
    server: Server, gateway: Any, jp_root_dir: Path, tmp_path: Path
) -> None:
    path = make_notebook(jp_root_dir)
    assert (await server.get("/api/sessions")).json() == []
    cells = [{"cell_type": "code", "source": "print(6 * 7)"}]
    script(gateway, tmp_path, propose(cells=cells, after_cell_id="cell-1"), {"content": "ok"})
    chat = asyncio.create_task(server.chat("print 42", notebook=path))
    run_id, proposal_id = await waiting_proposal(gateway)
    answer = await server.post(
        f"/resolve/api/runs/{run_id}/proposals/{proposal_id}", {"decision": "accept", "run": True}
    )
    assert answer.status_code == 200, answer.text
    assert answer.json()["ran"] is True
    assert {"output_type": "stream", "name": "stdout", "text": "42\n"} in answer.json()["outputs"][
        0
    ]
    [session] = (await server.get("/api/sessions")).json()
    assert session["path"] == path and session["kernel"]["id"]
    await chat
