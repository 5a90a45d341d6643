"""The ipywidgets view, driven without a frontend (widgets work without a kernel's comms)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from jupyter_resolve.magics import widgets
from jupyter_resolve.magics.safe_html import markdown_html
from jupyter_resolve.magics.view_model import RunView
from jupyter_resolve.magics.widgets import WIDGET_MIME, WidgetView
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
    # answer text: sanitized HTML for the (trusted) Output widget, the Markdown as plain text
    assert first.outputs[0]["data"] == {
        "text/html": "<p>I will run it.</p>\n",
        "text/plain": "I will run it.",
    }
    assert last.outputs[0]["data"]["text/plain"] == "It printed 42."
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


# Script payloads as a model, a tool or a peer could send them (issue 14, item 1). Each one,
# rendered as trusted HTML, would set a marker in the page.
IMG_ONERROR = '<img src=x onerror="window.__resolve_pwned=1">'
HTML_SCRIPT = "<script>window.__resolve_pwned=1</script><b>bold</b>"
SVG_SCRIPT = (
    '<svg xmlns="http://www.w3.org/2000/svg" onload="window.__resolve_pwned=1">'
    "<script>window.__resolve_pwned=1</script><rect width='4' height='4'/></svg>"
)
LINK = "[click](javascript:window.__resolve_pwned=1)"
ACTIVE = ("<script", "onerror", "onload", "javascript:", "<svg", "<iframe src")
SAFE_TYPES = {"text/plain", "text/html", "image/png", "image/jpeg", "image/gif"}


def payload_run() -> list[dict[str, Any]]:
    def completed(seq: int, call_id: str, mime: dict[str, Any]) -> dict[str, Any]:
        return ev(
            seq, "tool.completed", call_id=call_id, name="python", ok=True, output="", mime=mime
        )

    return [
        ev(1, "run.started", session_id="s-1", soul=None, model="scripted", budget={"rounds": 8}),
        ev(2, "text.delta", text=f"Look: {IMG_ONERROR} and {LINK}\n\n![x](http://evil.test/p.png)"),
        ev(3, "tool.requested", call_id="h", name="python", arguments={"code": "html"}),
        completed(4, "h", {"text/html": HTML_SCRIPT, "text/plain": "<HTML>"}),
        ev(5, "tool.requested", call_id="s", name="python", arguments={"code": "svg"}),
        completed(6, "s", {"image/svg+xml": SVG_SCRIPT, "text/plain": "<SVG>"}),
        ev(7, "tool.requested", call_id="m", name="python", arguments={"code": "md"}),
        completed(8, "m", {"text/markdown": f"# T\n\n{IMG_ONERROR}", "text/plain": "<MD>"}),
        ev(9, "tool.requested", call_id="j", name="python", arguments={"code": "js"}),
        completed(10, "j", {"application/javascript": "window.__resolve_pwned=1"}),
        ev(11, "text.delta", text=f"Done {IMG_ONERROR}"),
        ev(12, "run.completed", reason="stop", rounds=2),
    ]


def shown_bundles(widget: WidgetView) -> list[dict[str, Any]]:
    bundles = [o["data"] for out in widget.texts.values() for o in out.outputs]
    bundles += [o["data"] for card in widget.cards.values() for o in card.output.outputs]
    return bundles


def assert_inert(bundle: dict[str, Any]) -> None:
    """Only types JupyterLab renders without running anything, and no live markup in them."""
    from tests.jupyter_resolve.magics.test_safe_html import assert_inert_html

    assert set(bundle) <= SAFE_TYPES | {"text/markdown", WIDGET_MIME}, bundle
    for mime in ("text/html", "text/markdown"):
        if mime in bundle:
            assert_inert_html(bundle[mime])


def test_model_and_tool_payloads_never_reach_a_trusted_renderer() -> None:
    widget = WidgetView()
    widget._handle = _Handle()
    view = drive(widget, payload_run())
    widget.finish(view, 1.0)
    bundles = shown_bundles(widget)
    for bundle in bundles:
        assert set(bundle) <= SAFE_TYPES, bundle
        assert_inert(bundle)
    # the answer is there, sanitized: the image lost its handler, the remote image is a link
    first = widget.texts[0].outputs[0]["data"]["text/html"]
    assert '<img src="x">' in first and 'href="http://evil.test/p.png"' in first
    html_card = widget.cards["h"].output.outputs[-1]["data"]["text/html"]
    assert html_card.startswith('<iframe sandbox=""') and "allow-scripts" not in html_card
    svg_card = widget.cards["s"].output.outputs[-1]["data"]["text/html"]
    assert svg_card.startswith('<img src="data:image/svg+xml;base64,')
    assert "application/javascript" in widget.cards["j"].output.outputs[-1]["data"]["text/plain"]
    # the final display (shown where widgets are not): sanitized HTML, and as Markdown
    final = widget._handle.bundles[-1]
    assert_inert(final)
    assert final["text/markdown"].startswith("<div>") and "\n" not in final["text/markdown"][:-1]


def test_remote_images_load_when_the_server_allows_them() -> None:
    widget = WidgetView(allow_remote_images=True)
    drive(widget, payload_run())
    assert (
        '<img src="http://evil.test/p.png" alt="x">'
        in widget.texts[0].outputs[0]["data"]["text/html"]
    )


class _Handle:
    """Stands in for IPython's display handle (no frontend here): keeps what it is given."""

    def __init__(self) -> None:
        self.bundles: list[dict[str, Any]] = []

    def update(self, bundle: dict[str, Any], raw: bool) -> None:
        self.bundles.append(bundle)


class Clock:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_costly_render_waits_longer_so_the_stream_is_still_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Pieces every 15 ms and a render costing 0.5 s: the next render waits RENDER_SHARE times
    that, so the kernel goes on reading the stream instead of rendering at every piece."""
    clock, renders = Clock(), []

    def costly(text: str, **kw: Any) -> str:
        renders.append(text)
        clock.now += 0.5
        return markdown_html(text, **kw)

    monkeypatch.setattr(widgets, "markdown_html", costly)
    widget, view = WidgetView(clock=clock), RunView()
    for i in range(400):  # 6 s of pieces, plus the renders' own time
        part, key = view.apply(ev(i + 1, "text.delta", text=f"tok{i} "))
        widget.update(view, part, key)
        clock.now += 0.015
    # at the first piece, then every 0.5 s + 4 × 0.5 s: ~133 pieces read between renders
    assert len(renders) == 3, [len(r) for r in renders]
    widget.finish(view, None)
    assert renders[-1] == view.text  # what the throttle held back, at the end
    shown = [r.count("tok") for r in renders]
    assert all(b - a > 100 for a, b in itertools.pairwise(shown[:3])), shown
