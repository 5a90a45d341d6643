"""``%resolve`` in a kernel run headless by nbclient: ``@df`` describes the kernel's DataFrame
to the model (the fake OpenAI server records the request) and the cell shows what was told; a
proposal nobody decides times out as a rejection by timeout."""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import Iterator
from typing import Any

import nbformat
import pytest

from tests.fakes.openai_server import FakeOpenAI, text_reply
from tests.jupyter_resolve.magics.server import RunningServer, running_server
from tests.jupyter_resolve.notebook.test_proposals import CELLS, call_reply

pytestmark = pytest.mark.timeout(300)
KEY_ENV = "RESOLVE_TEST_FAKE_KEY"


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOpenAI]:
    """The fake provider, serving from a thread of its own (the server is another process)."""
    server = FakeOpenAI(
        [
            text_reply("df has three rows."),
            call_reply("notebook_propose", {"notebook": "mine.ipynb", "cells": CELLS}),
            text_reply("Nobody decided."),
        ]
    )
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    asyncio.run_coroutine_threadsafe(server.start(), loop).result(30)
    yield server
    asyncio.run_coroutine_threadsafe(server.stop(), loop).result(30)
    loop.call_soon_threadsafe(loop.stop)


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory, fake: FakeOpenAI) -> Iterator[RunningServer]:
    os.environ[KEY_ENV] = "sk-test"
    args = (
        "--Resolve.provider=openai",
        f"--Resolve.base_url={fake.base_url}",
        f"--Resolve.api_key_env={KEY_ENV}",
        "--Resolve.model=fake-model",
        "--Resolve.approval_timeout=2",
    )
    try:
        with running_server(tmp_path_factory.mktemp("mentions"), *args) as server:
            yield server
    finally:
        os.environ.pop(KEY_ENV, None)


def run_cells(server: RunningServer, sources: list[str]) -> Any:
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    return server.execute(notebook, timeout=120)


def shown(notebook: Any) -> str:
    parts = []
    for cell in notebook.cells:
        for output in cell.outputs:
            parts.append(output.get("text", ""))
            parts += [str(v) for v in output.get("data", {}).values()]
    return "\n".join(parts)


def test_at_df_reaches_the_model_and_a_proposal_times_out(
    live: RunningServer, fake: FakeOpenAI
) -> None:
    (live.root / "mine.ipynb").write_text(nbformat.writes(nbformat.v4.new_notebook()))
    notebook = run_cells(
        live,
        [
            "%load_ext jupyter_resolve",
            "import pandas as pd\ndf = pd.DataFrame({'height': [1.5, 1.7, 1.8], "
            "'species': ['<b>a</b>', 'b', 'a']})",
            "%resolve what is in @df? (mail me at a@b.org)",
            "%resolve add a cell to mine.ipynb",
            "print(_resolve.reason, [(c['name'], c['status']) for c in _resolve.tool_calls])",
        ],
    )
    told = fake.requests[0].body["messages"][-1]["content"]
    assert "@df:\ndf: pandas.DataFrame, shape (3, 2)" in told
    assert "height: float64" in told and "species" in told
    assert "@b" not in told.split("---")[1]  # only variables of the kernel are mentions
    mention_output = notebook.cells[2].outputs[0]["data"]
    assert "The model was told about @df:" in mention_output["text/plain"]
    # collapsed (issue 30 point 8): one line naming the variables, the descriptions on a click
    summary = "<details><summary>The model was told about @df</summary>"
    assert mention_output["text/html"].startswith(summary)
    assert "shape (3, 2)" in mention_output["text/plain"]
    assert "&lt;b&gt;a&lt;/b&gt;" in mention_output["text/html"]  # the data is escaped
    assert "<b>a</b>" not in mention_output["text/html"]
    # headless, no one clicks: the proposal is rejected by timeout and the model is told
    result = fake.requests[2].body["messages"][-1]
    assert result["role"] == "tool" and "counts as rejected" in result["content"]
    assert "stop [('notebook_propose', 'denied')]" in shown(notebook)
    log = [path for path in (live.root / ".resolve" / "runs").glob("*.jsonl")]
    decisions = [
        json.loads(line)["data"]
        for p in log
        for line in p.read_text().splitlines()
        if '"notebook.decision"' in line
    ]
    assert decisions and decisions[0]["by"] == "timeout"
