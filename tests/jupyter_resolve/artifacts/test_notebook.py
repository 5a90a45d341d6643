"""``notebooks/promotion.ipynb`` runs headless (nbclient) against a real ``jupyter server``."""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from jupyter_resolve.artifacts import ArtifactStore
from tests.jupyter_resolve.magics.server import running_server

REPO = Path(__file__).resolve().parents[3]


def test_promotion_notebook_runs_headless(tmp_path: Path) -> None:
    with running_server(tmp_path) as server:
        shutil.copy(REPO / "notebooks" / "promotion.ipynb", server.root / "promotion.ipynb")
        notebook = nbformat.read(server.root / "promotion.ipynb", as_version=4)
        client = NotebookClient(
            notebook,
            timeout=120,
            kernel_name="python3",
            resources={"metadata": {"path": str(server.root)}},
        )
        env = {**server.kernel_env(), "PYTHONPATH": str(REPO)}
        client.execute(env=env)  # raises CellExecutionError on any failing cell
    outputs = {
        i: "".join(
            o.get("text", "") or str(o.get("data", {}).get("text/plain", "")) for o in c.outputs
        )
        for i, c in enumerate(notebook.cells)
        if c.cell_type == "code"
    }
    text = "\n".join(outputs.values())
    assert "201" in text and "run.completed" in text
    assert "attachment" in text and "sandbox" in text
    assert "verified 4 artifact(s): 0 problem(s)" in text
    store = ArtifactStore(server.root / ".resolve" / "artifacts")
    kinds = sorted(m.media_type for m in store.find())
    assert kinds == ["image/svg+xml", "text/csv", "text/html", "text/plain"]
    assert store.verify().problems == []
    saved = nbformat.read(server.root / "experiment.ipynb", as_version=4)
    assert saved.cells[0].outputs[0].metadata["resolve"]["artifact_id"].startswith("art-")
