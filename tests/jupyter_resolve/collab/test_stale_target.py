"""A replace proposal under a live room (issue 40.2): the target cell's source is the room's,
unsaved typing included, so an accept made after someone edited the cell in another page is
refused with the new source, and the proposal's GET follows the cell as it changes."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("jupyter_server_ydoc", reason="jupyter-collaboration: run in .venv/collab")

from tests.jupyter_resolve.collab.room import (
    chat_events,
    collab_server,
    joined,
    notebook_with_output,
    saved_cells,
    source_of,
    until,
)
from tests.launcher import JupyterServer

pytestmark = pytest.mark.timeout(180)
PROPOSE = {
    "content": "",
    "tool_calls": [
        {
            "name": "notebook_propose",
            "arguments": {"cells": [{"cell_type": "code", "source": "x = 2"}]},
        }
    ],
}


def digest(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()


async def stale_accept(server: JupyterServer, path: str) -> None:
    events: list[Any] = []
    async with (
        joined(server, path) as notebook,
        httpx.AsyncClient(headers=server.headers, trust_env=False, timeout=30) as http,
    ):
        chat = asyncio.ensure_future(
            chat_events(
                server,
                {"messages": [{"role": "user", "content": "x = 2"}], "notebook": path},
                events,
            )
        )
        await until(lambda: any(e["type"] == "notebook.proposal" for e in events), "a proposal")
        proposal = next(e for e in events if e["type"] == "notebook.proposal")
        assert proposal["replaced_source"] == "x = 1"  # what A's card shows
        url = f"{server.url}/resolve/api/runs/{proposal['run_id']}/proposals/"
        url += proposal["proposal_id"]
        seen = {"cell_id": "cell-b", "sha256": digest("x = 1")}

        cells = {c["id"]: c for c in notebook.ycells}
        source = cells["cell-b"]["source"]
        source += "  # B was here"  # typed in B's page, not saved
        live = "x = 1  # B was here"
        current: dict[str, Any] = {}

        async def follows() -> bool:
            current.update((await http.get(url)).json().get("current") or {})
            return current.get("source") == live

        for _ in range(600):
            if await follows():
                break
            await asyncio.sleep(0.05)
        assert current["source"] == live and current["sha256"] == digest(live)

        stale = await http.post(url, json={"decision": "accept", "seen": seen})
        assert stale.status_code == 409, stale.text
        assert stale.json()["error"]["code"] == "stale_target"
        assert stale.json()["current"]["source"] == live
        assert source_of(saved_cells(server.root, path)["cell-b"]) == "x = 1"  # never saved

        fresh = {"cell_id": "cell-b", "sha256": digest(live)}
        accepted = await http.post(url, json={"decision": "accept", "seen": fresh})
        assert accepted.status_code == 200, accepted.text
        await chat
        assert any(e["type"] == "notebook.decision" for e in events)


def test_an_edit_in_another_page_makes_an_accept_stale(tmp_path: Path) -> None:
    script = tmp_path / "script.jsonl"
    turn = json.loads(json.dumps(PROPOSE))
    turn["tool_calls"][0]["arguments"]["replace_cell_id"] = "cell-b"
    script.write_text(json.dumps(turn) + "\n" + json.dumps({"content": "done"}) + "\n")
    # the room does not save during the test: what the server compares with is the room's
    with collab_server(tmp_path / "server", save_delay=600, script=script) as server:
        path = notebook_with_output(server.root)
        asyncio.run(stale_accept(server, path))
