"""A ``%resolve`` output becomes static when its run ends (issue 46.5): the live widget is
replaced through its display id by the run as sanitized HTML and Markdown, so the saved notebook
reads right without this kernel (after a reload, in nbviewer, on GitHub)."""

from __future__ import annotations

from typing import Any

from jupyter_resolve.magics.view_model import RunView
from jupyter_resolve.magics.widgets import WIDGET_MIME, WidgetView
from tests.jupyter_resolve.magics.test_safe_html import assert_inert_html

PNG = "iVBORw0KGgo="

RUN = "run-1"


def ev(seq: int, kind: str, **data: Any) -> dict[str, Any]:
    return {"seq": seq, "type": kind, "data": {"run_id": RUN, **data}}


class Handle:
    """Stands in for IPython's display handle: keeps what it is given."""

    def __init__(self) -> None:
        self.bundles: list[dict[str, Any]] = []

    def update(self, bundle: dict[str, Any], raw: bool) -> None:
        self.bundles.append(bundle)


def test_the_widget_is_replaced_by_the_run_as_html_and_its_widgets_closed() -> None:
    widget = WidgetView()
    handle = widget._handle = Handle()
    live = widget._bundle()
    assert WIDGET_MIME in live  # while the run is live
    view = RunView()
    events = [
        ev(1, "run.started", session_id="s-1", soul=None, model="scripted", budget={"rounds": 8}),
        ev(2, "tool.requested", call_id="c1", name="python", arguments={"code": "print(6*7)"}),
        ev(3, "tool.completed", call_id="c1", name="python", ok=True, output="42", ms=3),
        ev(4, "tool.requested", call_id="c2", name="python", arguments={"code": "df"}),
        ev(
            5,
            "tool.completed",
            call_id="c2",
            name="python",
            ok=True,
            output="",
            ms=3,
            mime={"text/html": "<table><tr><td>7</td></tr></table><script>x()</script>"},
        ),
        ev(6, "tool.requested", call_id="c3", name="python", arguments={"code": "plot()"}),
        ev(
            7,
            "tool.completed",
            call_id="c3",
            name="python",
            ok=True,
            output="",
            ms=3,
            mime={"image/png": PNG, "text/plain": "<Figure>"},
        ),
        ev(8, "text.delta", text="The answer is **42** <img src=x onerror=alert(1)>"),
        ev(9, "run.completed", reason="stop", rounds=2),
    ]
    for event in events:
        widget.update(view, *view.apply(event))
    card = widget.cards["c1"]
    assert widget.root.comm is not None and card.approve.comm is not None
    widget.finish(view, 1.5)
    [final] = handle.bundles
    assert WIDGET_MIME not in final
    assert set(final) == {"text/html", "text/markdown", "text/plain"}
    page = final["text/html"]
    # laid out as the widget was: each card with its code and output, the answer, the footer
    assert page.count("<fieldset>") == 3 and "print(6*7)" in page and "<pre>42</pre>" in page
    assert '<iframe sandbox=""' in page and f'<img src="data:image/png;base64,{PNG}">' in page
    assert "<strong>42</strong>" in page and "2 of 8 rounds" in page and "stop" in page
    assert_inert_html(page)  # it renders trusted: nothing in it runs or fetches
    assert_inert_html(final["text/markdown"])
    assert "onerror" not in page
    # nothing shows the widgets any more: the kernel lets them go
    assert widget.root.comm is None and card.approve.comm is None and card.output.comm is None
