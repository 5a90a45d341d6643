"""A second page on the same session picks up a run started elsewhere (issue 40.4), with what
the server already offers: the session's running runs (``GET /resolve/api/runs?session_id=
&status=running``), then the run's events from the start (``GET .../events?after=0``), which
show the proposal still waiting; its GET says ``state: waiting``; the page's decision counts."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import Server
from tests.jupyter_resolve.notebook.live import make_notebook
from tests.jupyter_resolve.notebook.test_proposals import propose, waiting_proposal
from tests.scripting import script

pytestmark = pytest.mark.timeout(120)


async def events_until(server: Server, run_id: str, wanted: str) -> list[dict[str, Any]]:
    """The run's events from its start, read until ``wanted`` arrives (the stream stays open)."""
    seen: list[dict[str, Any]] = []
    kind = ""
    async with httpx.AsyncClient(headers=server.auth, trust_env=False, timeout=60) as http:
        url = f"{server.base}/resolve/api/runs/{run_id}/events?after=0"
        async with http.stream("GET", url) as answer:
            async for line in answer.aiter_lines():
                if line.startswith("event:"):
                    kind = line.partition(":")[2].strip()
                elif line.startswith("data:"):
                    seen.append({"type": kind, **json.loads(line.partition(":")[2])})
                    if kind == wanted:
                        return seen
    return seen


async def test_a_run_started_in_one_page_is_found_and_decided_in_another(
    server: Server, gateway: Any, jp_root_dir: Path, tmp_path: Path
) -> None:
    path = make_notebook(jp_root_dir)
    cells = [{"cell_type": "code", "source": "x = 4"}]
    script(gateway, tmp_path, propose(cells=cells, after_cell_id="cell-1"), {"content": "ok"})
    first_page = asyncio.create_task(
        server.chat("add a cell", notebook=path, session_id="shared-session")
    )
    run_id, proposal_id = await waiting_proposal(gateway)

    running = await server.get("/resolve/api/runs?session_id=shared-session&status=running")
    assert [r["run_id"] for r in running.json()["runs"]] == [run_id]
    replayed = await events_until(server, run_id, "notebook.proposal")
    assert replayed[-1]["proposal_id"] == proposal_id
    assert "notebook.decision" not in [e["type"] for e in replayed]
    shown = await server.get(f"/resolve/api/runs/{run_id}/proposals/{proposal_id}")
    assert shown.json()["state"] == "waiting"

    decided = await server.post(
        f"/resolve/api/runs/{run_id}/proposals/{proposal_id}", {"decision": "accept"}
    )
    assert decided.status_code == 200, decided.text
    streamed = await first_page
    assert streamed.of("notebook.decision")[0]["decision"] == "accepted"
