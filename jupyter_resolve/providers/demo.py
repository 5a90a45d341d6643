"""The offline model's show-and-tell (issue 30.9): a plot, a proposal and a promotion from
plain prompts, no script needed.

* "plot ..." (or chart, graph): a python call that draws with matplotlib, shows the figure
  (its image is in the tool card) and saves it as ``plot.png`` in the session's work/;
* "add a cell ..." / "propose ...": a ``notebook_propose`` call with one small code cell (in a
  notebook chat it waits for the person's accept or reject);
* "promote ..." / "... artifact": ``artifacts.promote`` of ``plot.png`` (the person approves
  it), after drawing the plot first when this chat has not drawn it yet.

Each turn says it comes from a scripted model (DESIGN 3.2). The request names tools as the
wire does (``artifacts__promote``); the scripted model's frames go to the runtime as they are
(not mapped back), so it calls the tool by its own name.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..contracts.bodies import text_of
from .turns import OFFLINE, QUOTE_LIMIT, ToolCall, Turn, tool_names
from .wire_names import wire_name

PLOT = re.compile(r"\b(plot|chart|graph)", re.IGNORECASE)
PROPOSE = re.compile(r"\bpropos|\b(add|insert|write)\b.*\bcells?\b", re.IGNORECASE)
PROMOTE = re.compile(r"\bpromot|\bartifact", re.IGNORECASE)
PLOT_FILE = "plot.png"
PLOT_CODE = f"""\
try:
    import math
    import matplotlib.pyplot as plt
    from IPython.display import display
except ImportError as missing:
    print(f"cannot plot: {{missing}} (install matplotlib where the scratch kernel runs)")
else:
    xs = [i / 10 for i in range(64)]
    fig, ax = plt.subplots(figsize=(5, 3))
    ax.plot(xs, [math.sin(x) for x in xs], label="sin x")
    ax.plot(xs, [math.cos(x) for x in xs], label="cos x")
    ax.set_title("A demo plot from the offline scripted model")
    ax.legend()
    fig.savefig({PLOT_FILE!r}, dpi=100, bbox_inches="tight")
    display(fig)
    plt.close(fig)
    print("saved {PLOT_FILE}")
"""
PROPOSED_CELL = (
    "# proposed by the offline scripted model\n"
    "squares = [n * n for n in range(1, 6)]\n"
    "print('squares:', squares)\n"
)
SCRIPTED = "I am a scripted model, not a real one:"


def _calls(messages: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """The (name, arguments) of every tool call the assistant made in ``messages``."""
    found: list[tuple[str, str]] = []
    for message in messages:
        if message.get("role") != "assistant":
            continue
        for call in message.get("tool_calls") or []:
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict):
                found.append((str(function.get("name")), str(function.get("arguments") or "")))
    return found


def _quoted(messages: list[dict[str, Any]]) -> str:
    """The last tool result, quoted."""
    results = [m for m in messages if m.get("role") == "tool"]
    output = text_of(results[-1].get("content")).strip() if results else ""
    if len(output) > QUOTE_LIMIT:
        output = output[:QUOTE_LIMIT] + " [...]"
    return "\n".join(f"> {line}" for line in output.splitlines()) or "> (no output)"


def _plot_call(before: str) -> Turn:
    return Turn(
        f"{OFFLINE} {SCRIPTED} {before}I draw a demo plot with matplotlib and save it as "
        f"{PLOT_FILE} in work/.",
        tool_calls=(ToolCall("python", json.dumps({"code": PLOT_CODE})),),
    )


def _drew_plot(calls: list[tuple[str, str]]) -> bool:
    return any(name == "python" and PLOT_FILE in arguments for name, arguments in calls)


def promotion(messages: list[dict[str, Any]], after: list[dict[str, Any]]) -> Turn:
    """Draw the plot if this chat has not, promote it, then say what came of it."""
    promote = "artifacts.promote"
    if any(name in (promote, wire_name(promote)) for name, _ in _calls(after)):
        return Turn(
            f"{OFFLINE} The promotion answered:\n\n{_quoted(after)}\n\n"
            "A promoted file is in the Artifacts list, with this run as its source."
        )
    if not _drew_plot(_calls(messages)):
        return _plot_call("there is no plot in this chat yet, so first ")
    arguments = {
        "path": PLOT_FILE,
        "title": "Demo plot",
        "note": "Drawn by the offline scripted model's demo (sin and cos).",
    }
    return Turn(
        f"{OFFLINE} {SCRIPTED} I promote {PLOT_FILE} as an artifact; approve it to keep it.",
        tool_calls=(ToolCall(promote, json.dumps(arguments)),),
    )


def proposal(after: list[dict[str, Any]]) -> Turn:
    """Propose one small code cell, then say how the person answered."""
    if _calls(after):
        return Turn(f"{OFFLINE} The proposal was answered:\n\n{_quoted(after)}")
    arguments = {
        "cells": [{"cell_type": "code", "source": PROPOSED_CELL}],
        "note": "A small cell from the offline scripted model, to show how a proposal looks.",
    }
    return Turn(
        f"{OFFLINE} {SCRIPTED} I propose a small code cell for your notebook; accept or "
        "reject it there.",
        tool_calls=(ToolCall("notebook_propose", json.dumps(arguments)),),
    )


def plot(after: list[dict[str, Any]]) -> Turn:
    if not _calls(after):
        return _plot_call("")
    quoted = _quoted(after)
    if f"saved {PLOT_FILE}" not in quoted:  # it failed (no matplotlib?): say what it printed
        return Turn(f"{OFFLINE} The plot did not come out:\n\n{quoted}")
    return Turn(
        f"{OFFLINE} The plot is in the tool card above, saved as {PLOT_FILE} in work/. "
        'Say "promote the plot" to keep it as an artifact.'
    )


def showcase_turn(body: dict[str, Any], question: str, last_user: int) -> Turn | None:
    """The demo's answer when ``question`` asks for one of the three, else None."""
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    after = messages[last_user + 1 :]
    tools = tool_names(body)
    if PROMOTE.search(question) and wire_name("artifacts.promote") in tools:
        return promotion(messages, after) if "python" in tools else None
    if PROPOSE.search(question) and "notebook_propose" in tools:
        return proposal(after)
    if PLOT.search(question) and "python" in tools:
        return plot(after)
    return None
