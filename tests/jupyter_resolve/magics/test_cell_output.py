"""Issue 30 point 8: ``%resolve`` without clutter, in notebooks run headless with nbclient
against a real server (the scripted model): no ``Out[n]`` after a call (the result stays in
``_resolve``), and a cell that loads the extension and asks a question ending in ``?`` says
what to do (IPython read the question as a help request before the extension was there)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import nbformat
import pytest

from tests.jupyter_resolve.magics.server import RunningServer, running_server

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    with running_server(tmp_path_factory.mktemp("cell-output")) as running:
        yield running


def run(server: RunningServer, *sources: str) -> Any:
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    return server.execute(notebook, timeout=120)


def printed(cell: Any) -> str:
    return "".join(str(o.get("text", "")) for o in cell.outputs)


def test_a_resolve_cell_shows_the_run_and_no_out(server: RunningServer) -> None:
    notebook = run(
        server,
        "%load_ext jupyter_resolve",
        "%resolve hello",
        "%%resolve\nhello again",
        "print('KEPT', type(_resolve).__name__, _resolve.reason, bool(_resolve.run_id))",
    )
    for cell in notebook.cells[1:3]:
        kinds = [o.output_type for o in cell.outputs]
        assert "display_data" in kinds, kinds  # the run's view
        assert "execute_result" not in kinds, cell.outputs  # no Out[n]: <ResolveResult …>
    assert "KEPT ResolveResult stop True" in printed(notebook.cells[3])


def test_loading_and_asking_in_one_cell_says_what_to_do(server: RunningServer) -> None:
    cell = "%load_ext jupyter_resolve\n%resolve what is x?"
    notebook = run(
        server, cell, "print('ASKED', '_resolve' in dir())", cell, "print(_resolve.reason)"
    )
    said = printed(notebook.cells[0])
    assert "IPython read '%resolve what is x?' in this cell as a help request" in said, said
    assert "run the cell again" in said
    assert "ASKED False" in printed(notebook.cells[1])
    # run again, the extension loaded: the question reaches the agent, nothing more is said
    assert "help request" not in printed(notebook.cells[2])
    assert printed(notebook.cells[3]).strip() == "stop"
