"""Promotion under real-time collaboration (issue 40.1, DESIGN 9.2): while someone types in
another cell of the open notebook, promoting an output records the artifact id through the
room's shared document; every typed character stays, in the room and on disk, and the server
never writes the notebook file under the room. Without a room the id is saved to the file."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

pytest.importorskip("jupyter_server_ydoc", reason="jupyter-collaboration: run in .venv/collab")

from tests.jupyter_resolve.collab.room import (
    collab_server,
    joined,
    notebook_with_output,
    saved_cells,
    source_of,
    until,
)
from tests.launcher import JupyterServer

pytestmark = pytest.mark.timeout(180)
TYPED = "\n# B keeps typing through the promotion"


async def promote(server: JupyterServer, path: str) -> httpx.Response:
    body = {"notebook": path, "cell_id": "cell-a", "output_index": 0, "title": "the answer"}
    async with httpx.AsyncClient(headers=server.headers, trust_env=False, timeout=30) as http:
        return await http.post(f"{server.url}/resolve/api/artifacts", json=body)


async def type_and_promote(server: JupyterServer, path: str) -> tuple[str, str]:
    async with joined(server, path) as notebook:
        cells = {c["id"]: c for c in notebook.ycells}
        source = cells["cell-b"]["source"]
        half = len(TYPED) // 2
        for char in TYPED[:half]:
            source += char
            await asyncio.sleep(0.02)
        promoting = asyncio.ensure_future(promote(server, path))
        for char in TYPED[half:]:
            source += char
            await asyncio.sleep(0.02)
        answer = await promoting
        assert answer.status_code == 201, answer.text
        art_id = answer.json()["id"]
        expected = "x = 1" + TYPED

        def recorded() -> bool:
            output = cells["cell-a"]["outputs"][0]
            meta = output.to_py() if hasattr(output, "to_py") else output
            return (meta.get("metadata") or {}).get("resolve", {}).get("artifact_id") == art_id

        await until(recorded, "the artifact id in the page's copy of the cell")

        def on_disk() -> bool:
            saved = saved_cells(server.root, path)
            if not saved:
                return False
            meta = saved["cell-a"]["outputs"][0].get("metadata", {})
            return meta.get("resolve", {}).get("artifact_id") == art_id

        await until(on_disk, "the room saved the artifact id")
        await asyncio.sleep(1.5)  # three file polls: an out-of-band write would be taken by now
        assert str(cells["cell-b"]["source"]) == expected
        return art_id, expected


def test_promote_while_another_person_types_keeps_every_character(tmp_path: Path) -> None:
    with collab_server(tmp_path) as server:
        path = notebook_with_output(server.root)
        art_id, expected = asyncio.run(type_and_promote(server, path))
        saved = saved_cells(server.root, path)
        assert source_of(saved["cell-b"]) == expected
        assert saved["cell-a"]["outputs"][0]["metadata"]["resolve"]["artifact_id"] == art_id
        assert "Out-of-band" not in server.log_text()


def test_without_a_room_the_id_is_saved_to_the_file(tmp_path: Path) -> None:
    with collab_server(tmp_path) as server:
        path = notebook_with_output(server.root)
        answer = asyncio.run(promote(server, path))
        assert answer.status_code == 201, answer.text
        saved = saved_cells(server.root, path)
        meta = saved["cell-a"]["outputs"][0]["metadata"]
        assert meta["resolve"]["artifact_id"] == answer.json()["id"]
