"""The empty-run summary (pure): what a person needs when a run ends with no answer.

Not "retry": the call trace folded, rounds used of the budget, the last error, and a hint on
what to change. It exists because an empty answer after eight rounds of tool calls gave no clue
which tool had failed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any


def fold_trace(tool_names: Sequence[str]) -> str:
    """``['python', 'python', 'read_file']`` → ``'python ×2, read_file ×1'`` (first-seen order)."""
    counts = Counter(tool_names)
    return ", ".join(f"{name} ×{n}" for name, n in counts.items())


def _hint(reason: str, tool_names: Sequence[str], last_error: str | None) -> str:
    if reason == "budget":
        if tool_names and len(set(tool_names)) == 1:
            return (
                f"Every round went to '{tool_names[0]}'; narrow the question or raise the "
                "round budget (c.Resolve.max_rounds)."
            )
        return "The round budget ran out before an answer; narrow the question or raise it."
    if reason == "cancelled":
        return "The run was cancelled before the model answered."
    if last_error:
        return "Fix the error above (provider settings, tool arguments) before asking again."
    if tool_names:
        return "The model called tools but wrote no answer; ask it to summarize what it found."
    return "The model returned no text; check the provider and model settings."


def empty_run_summary(
    *,
    reason: str,
    tool_names: Sequence[str],
    rounds: int,
    budget: int,
    last_error: str | None,
) -> dict[str, Any]:
    """The summary carried by ``run.completed`` when a run produced no text."""
    trace = fold_trace(tool_names)
    summary: dict[str, Any] = {
        "tools": trace,
        "rounds": rounds,
        "budget": budget,
        "last_error": last_error,
        "hint": _hint(reason, tool_names, last_error),
    }
    lines = [f"No answer ({reason}) after {rounds} of {budget} rounds."]
    lines.append(f"Tool calls: {trace}." if trace else "No tool calls.")
    if last_error:
        lines.append(f"Last error: {last_error}")
    lines.append(summary["hint"])
    summary["text"] = " ".join(lines)
    return summary
