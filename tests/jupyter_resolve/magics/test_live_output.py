"""A running call's live output (``tool.output``, issue 30 point 2) in the magics' views, pure:
the view model's fold, the widget's card (sanitized, throttled), the terminal's lines."""

from __future__ import annotations

from typing import Any

from jupyter_resolve.magics.render import MarkdownStream
from jupyter_resolve.magics.run_markdown import to_markdown
from jupyter_resolve.magics.view_model import RunView, fold
from jupyter_resolve.magics.widgets import TEXT_INTERVAL, WidgetView
from tests.jupyter_resolve.magics.test_view_model import ev
from tests.jupyter_resolve.magics.test_widgets import SVG_SCRIPT, Clock, assert_inert, drive

PNG = "iVBORw0KGgo="


def out(seq: int, stream: str, **data: Any) -> dict[str, Any]:
    return ev(seq, "tool.output", call_id="c1", stream=stream, **data)


def started() -> list[dict[str, Any]]:
    code = {"code": "for i in range(3): print(i)"}
    return [
        ev(1, "run.started", session_id="s-1", soul=None, model="scripted", budget={"rounds": 8}),
        ev(2, "tool.requested", call_id="c1", name="python", arguments=code),
        ev(3, "tool.started", call_id="c1", name="python"),
    ]


def live_run() -> list[dict[str, Any]]:
    return [
        *started(),
        out(4, "stdout", text="step 1\n"),
        out(5, "stdout", text="step 2\nhal"),
        out(6, "stderr", text="careful\n"),
        out(7, "display", mime={"image/png": PNG, "text/plain": "<Figure>"}, display_id="d1"),
        out(8, "stdout", text="f\n"),
        out(9, "display", mime={"image/svg+xml": SVG_SCRIPT, "text/plain": "<SVG>"}),
        out(10, "display", mime={"text/markdown": "**90%**", "text/plain": "90%"}, display_id="d1"),
        out(11, "display", text="[a display (image/png, 900,000 characters) is not shown live]"),
    ]


def completed(seq: int) -> dict[str, Any]:
    whole = "step 1\nstep 2\nhalf\ncareful\n"
    return ev(seq, "tool.completed", call_id="c1", name="python", ok=True, output=whole, ms=9)


def test_the_card_folds_prints_in_order_and_an_update_replaces_its_display() -> None:
    view = fold(live_run())
    card = view.tools["c1"]
    assert card.status == "running" and not card.has_result
    pieces = [(p.stream, p.text, p.mime, p.display_id) for p in card.live.pieces]
    assert pieces == [
        ("stdout", "step 1\nstep 2\nhal", None, None),  # one stream's text joins up
        ("stderr", "careful\n", None, None),
        # the update of d1 took its place: where the display first stood, the newest content
        ("display", "", {"text/markdown": "**90%**", "text/plain": "90%"}, "d1"),
        ("stdout", "f\n", None, None),
        ("display", "", {"image/svg+xml": SVG_SCRIPT, "text/plain": "<SVG>"}, None),
        ("display", "[a display (image/png, 900,000 characters) is not shown live]", None, None),
    ]
    assert card.live.printed() == "step 1\nstep 2\nhalcareful\nf\n"
    assert card.live.version == 8
    assert view.apply(out(12, "stdout", text="")) == ("output", "c1")  # nothing: no change
    assert card.live.version == 8
    view.apply(completed(13))
    assert card.has_result and card.status == "done" and card.output.startswith("step 1")
    assert "tool.output" not in str(view.tools["c1"].as_dict())  # _resolve keeps the result


def test_the_widget_card_shows_the_live_output_sanitized_then_the_result() -> None:
    widget = WidgetView()
    view = drive(widget, started())
    for event in live_run()[3:]:
        part, key = view.apply(event)
        widget.update(view, part, key, force=True)
    card = widget.cards["c1"]
    assert "running…" in card.title.value
    shown = card.output.outputs
    streams = [(o["name"], o["text"]) for o in shown if o["output_type"] == "stream"]
    assert streams == [
        ("stdout", "step 1\nstep 2\nhal"),
        ("stderr", "careful\n"),
        ("stdout", "f\n"),
    ]
    displays = [o["data"] for o in shown if o["output_type"] == "display_data"]
    for bundle in displays:
        assert_inert(bundle)
    assert "<strong>90%</strong>" in displays[0]["text/html"]
    assert displays[1]["text/html"].startswith('<img src="data:image/svg+xml;base64,')
    assert "not shown live" in displays[2]["text/plain"]
    part, key = view.apply(completed(12))
    widget.update(view, part, key)
    assert "done in 9 ms" in card.title.value
    assert [o["data"] for o in card.output.outputs] == [
        {"text/plain": completed(12)["data"]["output"]}
    ]


def test_a_burst_of_output_is_throttled_and_its_end_shows_at_a_tick() -> None:
    clock = Clock()
    widget = WidgetView(clock=clock)
    view = drive(widget, started())
    sent: list[int] = []
    widget.cards["c1"].output.observe(lambda change: sent.append(1), names="outputs")
    for i in range(200):  # 200 events in 0.4 s
        part, key = view.apply(out(4 + i, "stdout", text=f"line {i}\n"))
        widget.update(view, part, key)
        clock.now += 0.002
    # at most one card state per TEXT_INTERVAL, not one per event
    assert 1 <= len(sent) <= 0.4 / TEXT_INTERVAL + 1, len(sent)
    last_text = widget.cards["c1"].output.outputs[-1]["text"]
    clock.now += TEXT_INTERVAL
    widget.tick(view)  # the quiet spell after the burst: its end shows
    whole = widget.cards["c1"].output.outputs[-1]["text"]
    assert whole.endswith("line 199\n") and len(whole) > len(last_text)


def test_the_terminal_prints_whole_lines_as_they_come() -> None:
    written: list[str] = []
    stream, view = MarkdownStream(write=written.append), RunView()
    printed_at: dict[int, str] = {}
    for event in live_run():
        stream.update(view, *view.apply(event))
        printed_at[event["seq"]] = "".join(written)
    assert printed_at[4].endswith("[python] step 1\n")
    assert printed_at[5].endswith("[python] step 2\n")  # "hal" waits for its line's end
    assert printed_at[6].endswith("[python] hal\n[python stderr] careful\n")
    assert printed_at[7].endswith("[python] [a display (image/png): shown in notebooks]\n")
    assert printed_at[10] == printed_at[9]  # an update of a display shown already: nothing new
    stream.update(view, *view.apply(completed(12)))
    text = "".join(written)
    assert text.endswith("→ done in 9 ms\n```\nstep 1\nstep 2\nhalf\ncareful\n```\n")


def test_the_terminal_says_the_output_is_above_when_the_result_is_what_was_printed() -> None:
    written: list[str] = []
    stream, view = MarkdownStream(write=written.append), RunView()
    whole = "step 1\nstep 2"
    events = [
        *started(),
        out(4, "stdout", text=whole),
        ev(5, "tool.completed", call_id="c1", name="python", ok=True, output=whole, ms=3),
    ]
    for event in events:
        stream.update(view, *view.apply(event))
    assert "".join(written).endswith(
        "[python] step 1\n[python] step 2\n→ done in 3 ms (its output is above)\n"
    )


def test_a_call_cut_off_keeps_what_it_printed() -> None:
    events = [*started(), out(4, "stdout", text="half way\n")]
    view = fold([*events, ev(5, "run.completed", reason="cancelled", rounds=1)])
    assert view.tools["c1"].status == "cancelled"
    assert "cancelled\n\n```python\nfor i in range(3): print(i)\n```\n\n```\nhalf way\n```" in (
        to_markdown(view)
    )
    widget = WidgetView()
    drive(widget, events)
    assert widget.cards["c1"].output.outputs[0]["text"] == "half way\n"
