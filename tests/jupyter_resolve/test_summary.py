from __future__ import annotations

from jupyter_resolve.contracts.discipline import tool_discipline
from jupyter_resolve.contracts.summary import empty_run_summary, fold_trace


def test_fold_trace_keeps_first_seen_order() -> None:
    assert fold_trace(["python", "read_file", "python", "python"]) == "python ×3, read_file ×1"
    assert fold_trace([]) == ""


def test_summary_for_budget_names_the_tool_and_the_knob() -> None:
    s = empty_run_summary(
        reason="budget", tool_names=["shell"] * 8, rounds=8, budget=8, last_error=None
    )
    assert "shell" in s["hint"] and "max_rounds" in s["hint"]
    assert s["text"].startswith("No answer (budget) after 8 of 8 rounds.")


def test_summary_with_error_points_at_it() -> None:
    s = empty_run_summary(
        reason="error", tool_names=[], rounds=1, budget=8, last_error="provider said 401"
    )
    assert s["last_error"] == "provider said 401"
    assert "provider said 401" in s["text"]
    assert "No tool calls." in s["text"]


def test_discipline_lists_tools_sorted_or_says_none() -> None:
    text = tool_discipline(["shell", "python"])
    assert "python, shell" in text
    assert "no tools" in tool_discipline([])
