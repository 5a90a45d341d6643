"""Issue 30 point 2: what a running call prints shows in ``%resolve``'s card while the call
runs. A real server on the offline scripted model, asked about progress, runs a loop that
prints five steps 0.3 s apart; the widget states the kernel sends, in order, must show a printed
line in the card before the card says the call is done (an order of states, never a stopwatch).
In terminal IPython the line is printed while the run's log has no ``tool.completed`` yet. A
replay shows the same."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

from tests.jupyter_resolve.magics.server import RunningServer, running_server

pytestmark = pytest.mark.timeout(300)
ASK = "%resolve show me your progress"
FIRST_LINE = "step 1 of 5"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    with running_server(tmp_path_factory.mktemp("live-output")) as running:
        yield running


class RecordingClient(NotebookClient):  # type: ignore[misc]
    """nbclient, keeping every widget state update, with its cell, in the order sent."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.updates: list[tuple[int, dict[str, Any]]] = []

    def handle_comm_msg(self, outs: list[Any], msg: dict[str, Any], cell_index: int) -> None:
        state = msg["content"].get("data", {}).get("state")
        if isinstance(state, dict):
            self.updates.append((cell_index, state))
        super().handle_comm_msg(outs, msg, cell_index)


def printed_live(state: dict[str, Any]) -> bool:
    """A card's Output widget showing the line as printed output (a stream output: the answer
    quoting it later, and the call's result, are display data)."""
    outputs = state.get("outputs") or []
    return any(
        o.get("output_type") == "stream" and FIRST_LINE in o.get("text", "") for o in outputs
    )


def call_done(state: dict[str, Any]) -> bool:
    value = str(state.get("value", ""))
    return "🔧 python" in value and "done in" in value


def test_the_card_shows_printed_lines_before_the_call_is_done(server: RunningServer) -> None:
    sources = ["%load_ext jupyter_resolve", ASK, "%resolve replay {_resolve.run_id}"]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    client = RecordingClient(
        notebook,
        timeout=120,
        kernel_name="python3",
        resources={"metadata": {"path": str(server.root)}},
    )
    client.execute(env=server.kernel_env())
    for cell in (1, 2):  # the run live, then its replay
        states = [state for index, state in client.updates if index == cell]
        lines = [i for i, state in enumerate(states) if printed_live(state)]
        done = [i for i, state in enumerate(states) if call_done(state)]
        assert done, (cell, notebook.cells[cell].outputs)
        assert lines, f"cell {cell}: no printed line in a card before the call was done"
        assert lines[0] < done[0], (cell, lines, done)
    # the result stays the whole result
    assert "step 5 of 5" in str(notebook.cells[1].outputs)


def test_terminal_ipython_prints_the_lines_while_the_call_runs(
    server: RunningServer, tmp_path: Path
) -> None:
    runs = server.root / ".resolve" / "runs"
    before = set(runs.glob("*.jsonl")) if runs.exists() else set()
    script = tmp_path / "ask.ipy"
    script.write_text(f"%load_ext jupyter_resolve\n{ASK}\n%resolve replay {{_resolve.run_id}}\n")
    env = {**server.kernel_env(), "IPYTHONDIR": str(tmp_path / "ipython")}
    command = [sys.executable, "-m", "IPython", "--no-banner", "--colors=nocolor", str(script)]
    proc = subprocess.Popen(command, env=env, cwd=tmp_path, stdout=subprocess.PIPE)
    assert proc.stdout is not None
    printed, done_when_first_seen = b"", None
    try:
        while piece := os.read(proc.stdout.fileno(), 65536):
            printed += piece
            if done_when_first_seen is None and f"[python] {FIRST_LINE}\n".encode() in printed:
                logs = set(runs.glob("*.jsonl")) - before
                assert len(logs) == 1, logs
                done_when_first_seen = "tool.completed" in logs.pop().read_text()
    finally:
        proc.stdout.close()
        assert proc.wait(60) == 0, printed.decode()
    text = printed.decode()
    assert done_when_first_seen is False, text
    # the run, then its replay: each prints the lines, then says the result is what was printed
    assert text.count("[python] step 5 of 5\n[python] done\n→ done in") == 2, text
    assert text.count("(its output is above)") == 2, text
