"""The local model at work (issue 46): SmolLM2-135M-Instruct with its tools, as a person uses it.

A real ``jupyter server`` with ``--Resolve.provider=local`` (the shipped model, its default lean
tool set, two threads, temperature 0, a fixed seed, one round a run), a CSV beside a notebook,
and plain questions about it that name no tool:

- ``local_first_token_ms_turn1``: from the chat's POST to the model's first token (a word, or
  the start of a call: ``text.delta`` or ``tool.writing``) for a greeting that opens a new
  session, the server already warm: the session's system turn and the greeting are evaluated,
  the start of the system turn (the same in every session) comes from the KV cache;
- ``local_first_token_ms_turn2``: the same for the session's next message, a question about the
  data (goal <= 1.5 s on 2 cores): the first turn, answered in words, is in the KV cache, so
  only the new message is evaluated (a first turn that ran a tool would add its result, which
  the model has not read yet);
- ``local_tool_call_validity``: of 20 questions (5 quick), the share whose first round is a call
  whose arguments parse (the runtime read them; a call cut short fails); with
  ``local_tool_calls`` (rounds that called a tool) and ``local_python_calls`` (that called
  ``python``) of ``local_questions``.

Slow on a shared machine (the model writes a few dozen tokens a second): in quick mode it runs
only when named (``python -m bench --quick --only local_tools``).
"""

from __future__ import annotations

import importlib.util
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from tests.launcher import JupyterServer

from .chain import frames
from .core import BenchError, Context, Figure, Goal, NotMeasured, median

ARGV = (
    "--Resolve.provider=local",
    "--Resolve.local_threads=2",
    "--Resolve.local_max_tokens=128",
    "--Resolve.local_temperature=0",
    "--Resolve.local_seed=7",
    "--Resolve.max_rounds=1",
)
CSV = (
    "species,island,body_mass_g\n"
    "Adelie,Torgersen,3750\nAdelie,Biscoe,3800\nGentoo,Biscoe,5000\nChinstrap,Dream,3700\n"
)
NOTEBOOK = {
    "nbformat": 4,
    "nbformat_minor": 5,
    "metadata": {},
    "cells": [
        {
            "cell_type": "code",
            "id": "c1",
            "metadata": {},
            "source": "import pandas as pd",
            "outputs": [],
            "execution_count": None,
        }
    ],
}
QUESTIONS = [
    "What is the mean body mass per species?",
    "How many rows does penguins.csv have?",
    "Which island has the heaviest penguins?",
    "What is the largest body mass in the data?",
    "Plot body mass by species.",
    "How many penguins live on Biscoe?",
    "What is the smallest body mass?",
    "List the species in the data.",
    "What is the total body mass of all penguins?",
    "Sort the penguins by body mass.",
    "Which species is the lightest on average?",
    "How many different islands are there?",
    "Show the first two rows of penguins.csv.",
    "What is the median body mass?",
    "Count the penguins per species.",
    "Is any body mass missing?",
    "What is the standard deviation of body mass?",
    "Which penguin is the heaviest?",
    "Give the mean body mass per island.",
    "How much heavier is a Gentoo than an Adelie on average?",
]
OPENERS = [
    "Hello, who are you?",
    "Hi! What can you help me with?",
    "Good morning.",
    "Hello there.",
    "Hi, I have some penguin data.",
]


def timed_chat(
    client: httpx.Client, server: JupyterServer, question: str, session: str = ""
) -> tuple[float, list[dict[str, Any]]]:
    """Seconds to the model's first token, and the run's events (type, data)."""
    body: dict[str, Any] = {
        "messages": [{"role": "user", "content": question}],
        "notebook": "analysis.ipynb",
    }
    if session:
        body["session_id"] = session
    received = bytearray()
    first: float | None = None
    start = time.perf_counter()
    url = f"{server.url}/resolve/api/chat"
    with client.stream("POST", url, json=body, headers=server.headers) as response:
        for chunk in response.iter_raw():
            received += chunk
            if first is None and (
                b"event: text.delta" in received or b"event: tool.writing" in received
            ):
                first = time.perf_counter()
    events = [
        {"type": f.get("event", ""), "data": json.loads(f.get("data") or "{}")}
        for f in frames(bytes(received))
    ]
    if first is None or not any(e["type"] == "run.completed" for e in events):
        raise BenchError(f"a chat on the local model wrote nothing: {bytes(received[-400:])!r}")
    return first - start, events


def of(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e["data"] for e in events if e["type"] == kind]


def first_tokens(ctx: Context, server: JupyterServer, client: httpx.Client) -> list[Figure]:
    turn1: list[float] = []
    turn2: list[float] = []
    for i in range(ctx.repeats(2, 5)):
        seconds, events = timed_chat(client, server, OPENERS[i])
        turn1.append(seconds)
        session = str(of(events, "run.started")[0]["session_id"])
        turn2.append(timed_chat(client, server, QUESTIONS[i], session)[0])
    return [
        Figure("local_first_token_ms_turn1", round(1000 * median(turn1), 1), "ms"),
        Figure(
            "local_first_token_ms_turn2",
            round(1000 * median(turn2), 1),
            "ms",
            goal=Goal(1500.0),
            note="the first turn in the KV cache",
        ),
    ]


def validity(ctx: Context, server: JupyterServer, client: httpx.Client) -> list[Figure]:
    questions = QUESTIONS[: ctx.repeats(5, 20)]
    calls = python = valid = 0
    for question in questions:
        _, events = timed_chat(client, server, question)
        requested, done = of(events, "tool.requested"), of(events, "tool.completed")
        if not requested:
            continue
        calls += 1
        python += requested[0]["name"] == "python"
        parsed = isinstance(requested[0].get("arguments"), dict)
        valid += parsed and "invalid JSON" not in str(done[0].get("output") if done else "")
    return [
        Figure("local_tool_call_validity", round(valid / calls, 3) if calls else 0.0, "ratio"),
        Figure("local_tool_calls", calls, "runs"),
        Figure("local_python_calls", python, "runs"),
        Figure("local_questions", len(questions), "runs"),
    ]


def local_tools(ctx: Context) -> list[Figure]:
    if ctx.quick and "local_tools" not in ctx.named:
        raise NotMeasured("slow: run it with --only local_tools")
    if importlib.util.find_spec("llama_cpp") is None:
        raise NotMeasured("the local extra (llama-cpp-python) is not installed")
    workdir = Path(ctx.stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-tools-")))
    root = workdir / "root"
    root.mkdir()
    (root / "penguins.csv").write_text(CSV)
    (root / "analysis.ipynb").write_text(json.dumps(NOTEBOOK))
    server = ctx.stack.enter_context(
        JupyterServer(workdir, argv=ARGV, env={"HOME": str(workdir)}, ready="runtime")
    )
    with httpx.Client(timeout=600, trust_env=False) as client:
        timed_chat(client, server, "Hi")  # the model server started and its common prefix held
        return [*first_tokens(ctx, server, client), *validity(ctx, server, client)]
