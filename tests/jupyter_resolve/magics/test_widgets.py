"""The ipywidgets view, driven without a frontend (widgets work without a kernel's comms)."""

from __future__ import annotations

from typing import Any

from jupyter_resolve.magics.view_model import RunView
from jupyter_resolve.magics.widgets import WidgetView
from tests.jupyter_resolve.magics.test_view_model import ev, tool_run


def drive(view_widget: WidgetView, events: list[dict[str, Any]]) -> RunView:
    view = RunView()
    for event in events:
        part, key = view.apply(event)
        view_widget.update(view, part, key)
    return view


def test_widget_view_shows_text_reasoning_cards_and_footer() -> None:
    widget = WidgetView()
    view = drive(widget, tool_run())
    widget.finish(view, 1.5)
    assert "scripted" in widget.header.value and "s-1" in widget.header.value
    assert widget.reasoning.layout.display == "flex" and widget.reasoning.selected_index is None
    assert "let me look" in widget.reasoning_text.value
    kinds = [type(child).__name__ for child in widget.timeline.children]
    assert kinds == ["Output", "VBox", "Output"]  # text, the tool card, text: in order
    first, card, last = widget.timeline.children
    assert card is widget.cards["c1"].box
    assert first.outputs[0]["data"]["text/markdown"] == "I will run it."
    assert last.outputs[0]["data"]["text/markdown"] == "It printed 42."
    python = widget.cards["c1"]
    assert "python" in python.title.value and "done in 12 ms" in python.title.value
    assert "print(6*7)" in python.arguments.value
    bundles = [o["data"] for o in python.output.outputs]
    assert bundles == [{"text/plain": "42"}, {"image/png": "iVBORw0KGgo="}]
    assert python.buttons.layout.display == "none"
    assert "2 of 8 rounds · 280 tokens · 1 tool call · 1.5 s · stop" in widget.footer.value


def test_approve_and_deny_buttons_post_the_decision() -> None:
    decisions: list[tuple[str, str]] = []

    def decide(call_id: str, decision: str) -> str | None:
        decisions.append((call_id, decision))
        return None if decision == "approve" else "409: already decided"

    widget = WidgetView(decide)
    events = [
        ev(1, "tool.requested", call_id="c1", name="shell", arguments={"command": "ls"}),
        ev(2, "tool.approval", call_id="c1", name="shell", arguments={}, state="waiting"),
        ev(3, "tool.requested", call_id="c2", name="shell", arguments={"command": "rm x"}),
        ev(4, "tool.approval", call_id="c2", name="shell", arguments={}, state="waiting"),
    ]
    drive(widget, events)
    first, second = widget.cards["c1"], widget.cards["c2"]
    assert first.buttons.layout.display == "flex" and "waiting for approval" in first.title.value
    first.approve.click()
    assert decisions == [("c1", "approve")]
    assert first.buttons.layout.display == "none" and "approve sent" in first.note.value
    second.deny.click()
    assert decisions[-1] == ("c2", "deny")
    assert "already decided" in second.note.value and second.buttons.layout.display == "flex"


def test_empty_run_shows_the_summary() -> None:
    widget = WidgetView()
    summary = {"text": "No answer (budget) after 3 of 3 rounds."}
    view = drive(widget, [ev(1, "run.completed", reason="budget", rounds=3, summary=summary)])
    widget.finish(view, None)
    assert "No answer (budget) after 3 of 3 rounds." in widget.errors.value
