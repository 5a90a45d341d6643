"""Every notebook in notebooks/ runs headless with nbclient against a real server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest

from tests.conftest import REPO
from tests.jupyter_resolve.magics.server import RunningServer, running_server

NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
STATIC_RUN = '<div class="jupyter-resolve-run">'  # magics/static_view.py


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    with running_server(tmp_path_factory.mktemp("notebooks")) as running:
        yield running


@pytest.fixture(scope="module")
def executed(server: RunningServer) -> dict[Path, Any]:
    """Notebooks already run in this module (each runs once)."""
    return {}


def run(path: Path, server: RunningServer, executed: dict[Path, Any]) -> Any:
    if path not in executed:
        executed[path] = execute(path, server)
    return executed[path]


def execute(path: Path, server: RunningServer) -> Any:
    # A kernel started here, not by the server: it gets the connection by hand (any token the
    # server accepts works).
    return server.execute(nbformat.read(path, as_version=4))


def outputs(notebook: Any) -> list[dict[str, Any]]:
    return [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]


def plain(notebook: Any) -> str:
    parts: list[str] = []
    for output in outputs(notebook):
        parts.append(output.get("text", ""))
        data = output.get("data", {})
        parts.append(data.get("text/plain", ""))
        parts.append(data.get("text/markdown", ""))
    return "\n".join(parts)


def test_there_are_notebooks() -> None:
    assert "quickstart.ipynb" in [p.name for p in NOTEBOOKS]


def uses_magics(notebook: Any) -> bool:
    return any(
        "%resolve" in cell.source and "%load_ext jupyter_resolve" not in cell.source
        for cell in notebook.cells
        if cell.cell_type == "code"
    )


@pytest.mark.timeout(400)
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_headless(
    path: Path, server: RunningServer, executed: dict[Path, Any]
) -> None:
    notebook = run(path, server, executed)
    assert not [o for o in outputs(notebook) if o.output_type == "error"]
    if not uses_magics(notebook):
        return
    # A run is a live widget while it works; once it ended, its display is the run as static,
    # sanitized HTML and as Markdown (issue 46.5): the saved notebook reads right without a
    # kernel, in nbviewer and on GitHub, and holds no widget view a new kernel cannot show.
    runs = [o for o in outputs(notebook) if STATIC_RUN in o.get("data", {}).get("text/html", "")]
    assert runs, "a finished run is shown as static HTML"
    assert all("text/markdown" in o["data"] for o in runs)
    assert not [o for o in outputs(notebook) if WIDGET_VIEW in o.get("data", {})]


def test_quickstart(server: RunningServer, executed: dict[Path, Any]) -> None:
    notebook = run(REPO / "notebooks" / "quickstart.ipynb", server, executed)
    text = plain(notebook)
    assert "**jupyter-resolve** 0.1.0" in text  # %resolve status
    assert "(offline scripted model)" in text  # a first chat
    assert "\n42\n" in text  # the tool call's output
    # _resolve: the plot run's id and reason, its text and the SVG the tool call showed.
    assert "stop\n(offline scripted model) I will run your code" in text
    assert "('python', 'done', ['image/svg+xml'])" in text
    # The plot is in the widget state (live view, as an image: never inline SVG) and inline in
    # the Markdown fallback.
    state = json.dumps(notebook.metadata["widgets"])
    assert "data:image/svg+xml;base64," in state and "<svg" not in state
    assert "data:image/svg+xml;base64," in text
    # One session: the scratch kernel kept `total` (interpolated from n = 10) for the next turn.
    assert "\n45\n" in text and "\n90\n" in text
    # %resolve runs and replay.
    assert "| run | session | started | state | asked |" in text
    assert text.count("drew 8 bars") >= 2


def test_roles(server: RunningServer, executed: dict[Path, Any]) -> None:
    notebook = run(REPO / "notebooks" / "roles.ipynb", server, executed)
    text = plain(notebook)
    assert "reason: stop" in text
    assert "roles: planner → specialist → evaluator → tool-agent" in text


def test_with_my_notebook(server: RunningServer, executed: dict[Path, Any]) -> None:
    notebook = run(REPO / "notebooks" / "with-my-notebook.ipynb", server, executed)
    text = plain(notebook)
    # @df and @arr: described from the kernel, shown as told to the model
    assert "The model was told about @df" in text
    assert "@df:\ndf: pandas.DataFrame, shape (4, 2)" in text
    assert "@arr:\narr: numpy.ndarray, shape (3, 4)" in text
    tools = ["inspect_variable", "notebook_propose", "notebook_variables", "snapshot_variable"]
    assert repr(tools) in text
