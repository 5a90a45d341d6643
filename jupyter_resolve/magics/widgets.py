"""The live ipywidgets view of a run.

Answer text is Markdown, re-rendered in place as it arrives; reasoning sits in a collapsed
Accordion whose title counts its words as it grows; every tool call is a card (name, arguments,
status, output, images) with Approve/Deny buttons while it waits for a person; a footer shows
rounds, tokens and elapsed time.
The display also carries the run as Markdown, for frontends that cannot render widgets.

Growing parts (each text block, the reasoning, the footer) are throttled, not debounced: one is
sent at most every ``TEXT_INTERVAL`` while its events keep coming, so a model streaming pieces
15 ms apart shows ~10 states a second; what the throttle held back goes out at the next tick of
a quiet spell (:class:`.watch.Ticking`), before a tool card and at the end. A running call's
live output (what it prints, ``tool.output``) is throttled the same way, per card; its result
shows at once and replaces it. Sending every piece
would resend the whole growing text each time (quadratic bytes through the kernel, the server
and the browser, which then trail far behind the run). A long answer costs more to render each
time: the wait after a render is at least ``RENDER_SHARE`` times what it took, so rendering
never keeps the kernel from reading the stream (it would otherwise read one piece per render
and fall ever further behind the run).

Everything shown passes through :mod:`.safe_html` first: the Output widget renders as trusted,
so model, tool and run-log content is sanitized (or escaped) before it gets there.
"""

from __future__ import annotations

import html
import time
from collections.abc import Callable
from typing import Any

from .live_output import live_outputs
from .proposal_view import ProposalCard
from .render import Decide
from .run_markdown import to_markdown
from .safe_html import markdown_block, markdown_html, tool_bundle
from .static_view import static_html
from .steer_box import Steer, SteerBox
from .subshell import route_while_busy
from .view_model import Part, RunView, TextBlock, ToolCard

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
TEXT_INTERVAL = 0.1  # seconds between re-renders of a growing part (text, reasoning, footer)
RENDER_SHARE = 4  # ... or this many times the last render's cost, when that is longer


def _pre(text: str, style: str = "") -> str:
    return f'<pre style="white-space: pre-wrap; margin: 2px 0; {style}">{html.escape(text)}</pre>'


def _display_data(data: dict[str, Any]) -> dict[str, Any]:
    return {"output_type": "display_data", "data": data, "metadata": {}}


class _Card:
    """The widgets of one tool card."""

    def __init__(
        self,
        w: Any,
        card: ToolCard,
        decide: Callable[[str, str], None],
        allow_remote_images: bool = False,
    ) -> None:
        self.allow_remote_images = allow_remote_images
        self.title = w.HTML()
        self.arguments = w.HTML(_pre(card.arguments_text(), "font-size: 90%;"))
        self.output = w.Output()
        self.approve = w.Button(description="Approve", button_style="success", icon="check")
        self.deny = w.Button(description="Deny", button_style="danger", icon="times")
        self.approve.on_click(lambda _b: decide(card.call_id, "approve"))
        self.deny.on_click(lambda _b: decide(card.call_id, "deny"))
        self.buttons = w.HBox([self.approve, self.deny])
        self.buttons.layout.display = "none"
        self.note = w.HTML()
        self.proposal = w.HTML()  # notebook_propose: the diff, Approve/Deny read Accept/Reject
        self.box = w.VBox(
            [self.title, self.arguments, self.proposal, self.buttons, self.note, self.output],
            layout=w.Layout(border="1px solid #ccc", padding="4px", margin="4px 0"),
        )
        route_while_busy([self.approve, self.deny])
        self.shown: tuple[str, str, int, bool] | None = None

    @staticmethod
    def state(card: ToolCard) -> tuple[str, str, int, bool]:
        """What the card shows depends on; rendered again only when this changed."""
        return (card.status, card.output, card.live.version, card.has_result)

    def render(self, card: ToolCard) -> None:
        state = self.state(card)
        if state == self.shown:
            return
        self.shown = state
        colour = {"done": "#2a7", "error": "#c33", "denied": "#c33", "waiting": "#d80"}
        self.title.value = (
            f"<b>🔧 {html.escape(card.name)}</b> "
            f'<span style="color: {colour.get(card.status, "#777")}">'
            f"{html.escape(card.status_text())}</span>"
        )
        if card.arguments is not None:
            self.arguments.value = _pre(card.arguments_text(), "font-size: 90%;")
        self.buttons.layout.display = "flex" if card.waiting else "none"
        if card.live.pieces and not card.has_result:  # running (or cut off): what it printed
            self.output.outputs = tuple(
                live_outputs(card.live, allow_remote_images=self.allow_remote_images)
            )
            return
        outputs: list[dict[str, Any]] = []
        if card.output:
            text = card.output + ("\n(output truncated)" if card.truncated else "")
            outputs.append(_display_data({"text/plain": text}))
        rich = tool_bundle(card.mime, allow_remote_images=self.allow_remote_images)
        if rich:
            outputs.append(_display_data(rich))
        self.output.outputs = tuple(outputs)

    def show_proposal(self, proposal: ProposalCard) -> None:
        self.approve.description, self.deny.description = "Accept", "Reject"
        self.arguments.layout.display = "none"  # the diff shows the cells
        note = f"<i>{html.escape(proposal.note)}</i>" if proposal.note else ""
        self.proposal.value = (
            f"{note}{_diff_html(proposal.diff())}<div>{html.escape(proposal.decision_text())}</div>"
        )


def _diff_html(diff: str) -> str:
    """A unified diff, escaped, its added and removed lines coloured."""
    colours = {"+": "#1a7f37", "-": "#cf222e", "@": "#777"}
    lines = "".join(
        f'<span style="color:{colours.get(line[:1], "inherit")}">{html.escape(line)}</span>'
        for line in diff.splitlines(keepends=True)
    )
    return f'<pre style="white-space: pre-wrap; margin: 2px 0; font-size: 90%">{lines}</pre>'


class WidgetView:
    """A live view of one run; call :meth:`update` after every folded event."""

    def __init__(
        self,
        decide: Decide | None = None,
        *,
        allow_remote_images: bool = False,
        clock: Callable[[], float] = time.monotonic,
        steer: Steer | None = None,
    ) -> None:
        import ipywidgets as w  # type: ignore[import-untyped]

        self._w = w
        self._clock = clock  # the throttle's (a seam for its tests)
        self._decide = decide
        self.allow_remote_images = allow_remote_images
        self.header = w.HTML()
        self.reasoning_text = w.HTML()
        self.reasoning = w.Accordion(children=[self.reasoning_text])
        self.reasoning.set_title(0, "Reasoning")
        self.reasoning.selected_index = None
        self.reasoning.layout.display = "none"
        self.timeline = w.VBox()
        self.errors = w.HTML()
        self.footer = w.HTML()
        # a live run's box to steer it with (magics/steer_box.py); none for a replay
        self.steer = SteerBox(w, steer) if steer is not None else None
        parts = [self.header, self.reasoning, self.timeline, self.errors, self.footer]
        self.root = w.VBox(parts + ([self.steer.box] if self.steer else []))
        self.cards: dict[str, _Card] = {}
        self.texts: dict[int, Any] = {}
        self._rendered: dict[int, int] = {}  # text block → length shown
        self._next_at: dict[str, float] = {}  # growing part → when it may be sent again
        self._reasoning_shown = 0  # characters of reasoning shown
        self.started = clock()
        self._handle: Any = None

    def start(self) -> None:
        from IPython.display import display

        self._handle = display(self._bundle(), raw=True, display_id=True)  # type: ignore[no-untyped-call]

    def _bundle(self, view: RunView | None = None, elapsed: float | None = None) -> dict[str, Any]:
        """While the run is live (no ``view``), the widget; once it ended, the run as static
        HTML laid out as the widget was (:mod:`.static_view`), the same as a Markdown document
        (nbconvert, readers of text/markdown), and its Markdown as plain text (shown as text,
        never rendered). No widget then: its model lives only as long as this kernel, so after
        a reload with a new kernel, in nbviewer or on GitHub it would read "Error displaying
        widget"."""
        if view is None:
            model = {"version_major": 2, "version_minor": 0, "model_id": self.root.model_id}
            return {WIDGET_MIME: model, "text/plain": "jupyter-resolve run (a live widget view)"}
        safe = static_html(view, elapsed, allow_remote_images=self.allow_remote_images)
        plain = to_markdown(view, elapsed=elapsed)
        return {"text/html": safe, "text/markdown": markdown_block(safe), "text/plain": plain}

    def _on_decision(self, run_id: str) -> Callable[[str, str], None]:
        def decide(call_id: str, decision: str) -> None:
            widgets = self.cards.get(call_id)
            if self._decide is None:
                return
            error = self._decide(call_id, decision)
            if widgets is not None:
                widgets.note.value = (
                    f'<span style="color:#c33">could not send the decision: {html.escape(error)}'
                    "</span>"
                    if error
                    else f"<i>{decision} sent</i>"
                )
                if not error:
                    widgets.buttons.layout.display = "none"

        return decide

    def update(self, view: RunView, part: Part, key: str, *, force: bool = False) -> None:
        if part == "header":
            soul = f" · soul {html.escape(view.soul)}" if view.soul else ""
            self.header.value = (
                f'<span style="color:#777; font-size: 90%">{html.escape(view.model)}{soul} · '
                f"session {html.escape(view.session_id)} · {html.escape(view.run_id)}</span>"
            )
        elif part == "text":
            self._reasoning(view, True)  # the reasoning before the answer shows whole
            self._text(view, int(key), force)
        elif part == "reasoning":
            self._reasoning(view, force)
        elif part == "tool":
            self._flush(view)  # what the throttle held back shows before the card
            self._card(view, view.tools[key])
        elif part == "output":
            self._live(view, view.tools[key], force)
        elif part == "footer" and view.completed and self.steer is not None:
            self.steer.hide()
        elif part == "error":
            self.errors.value = "".join(
                f'<div style="color:#c33">{html.escape(e)}</div>' for e in view.errors
            )
        self._footer(view, self._clock() - self.started, force)

    def _due(self, part: str, force: bool) -> bool:
        """Whether ``part`` may be sent now: the throttle (call :meth:`_sent` after sending)."""
        return force or self._clock() >= self._next_at.get(part, 0.0)

    def _sent(self, part: str, started: float) -> None:
        now = self._clock()
        self._next_at[part] = now + max(TEXT_INTERVAL, RENDER_SHARE * (now - started))

    def tick(self, view: RunView) -> None:
        """A quiet spell (no event for a while): send what the throttle held back, when due."""
        self._reasoning(view, False)
        for index in list(self.texts):
            self._text(view, index, False)
        for call_id in list(self.cards):
            self._live(view, view.tools[call_id], False)

    def _flush(self, view: RunView) -> None:
        self._reasoning(view, True)
        for index in list(self.texts):
            self._text(view, index, True)

    def _reasoning(self, view: RunView, force: bool) -> None:
        if self._reasoning_shown == len(view.reasoning) or not self._due("reasoning", force):
            return
        started = self._clock()
        self._reasoning_shown = len(view.reasoning)
        self.reasoning.layout.display = "flex"
        words = len(view.reasoning.split())
        self.reasoning.set_title(0, f"Reasoning ({words:,} word{'s' if words != 1 else ''})")
        self.reasoning_text.value = _pre(view.reasoning, "color: #666;")
        self._sent("reasoning", started)

    def _footer(self, view: RunView, elapsed: float | None, force: bool) -> None:
        text = (
            f'<span style="color:#777; font-size: 90%">'
            f"{html.escape(view.footer_text(elapsed))}</span>"
        )
        if text != self.footer.value and self._due("footer", force):
            started = self._clock()
            self.footer.value = text
            self._sent("footer", started)

    def _text(self, view: RunView, index: int, force: bool) -> None:
        block = view.blocks[index]
        if not isinstance(block, TextBlock):
            return
        out = self.texts.get(index)
        if out is None:
            out = self.texts[index] = self._w.Output()
            self.timeline.children = (*self.timeline.children, out)
        part = f"text {index}"
        if self._rendered.get(index, 0) == len(block.text) or not self._due(part, force):
            return
        started = self._clock()
        self._rendered[index] = len(block.text)
        safe = markdown_html(block.text, allow_remote_images=self.allow_remote_images)
        out.outputs = (_display_data({"text/html": safe, "text/plain": block.text}),)
        self._sent(part, started)

    def _live(self, view: RunView, card: ToolCard, force: bool) -> None:
        """A running call's card with its live output: throttled like a growing text."""
        widgets = self.cards.get(card.call_id)
        if widgets is not None and widgets.shown == _Card.state(card):
            return
        part = f"output {card.call_id}"
        if not self._due(part, force):
            return  # a tick, the next output or the call's result shows it
        started = self._clock()
        self._card(view, card)
        self._sent(part, started)

    def _card(self, view: RunView, card: ToolCard) -> None:
        widgets = self.cards.get(card.call_id)
        if widgets is None:
            widgets = self.cards[card.call_id] = _Card(
                self._w, card, self._on_decision(view.run_id), self.allow_remote_images
            )
            self.timeline.children = (*self.timeline.children, widgets.box)
        widgets.render(card)
        for proposal in view.proposals.values():
            if proposal.call_id == card.call_id:
                widgets.show_proposal(proposal)

    def finish(self, view: RunView, elapsed: float | None) -> None:
        self._reasoning(view, True)
        for index, block in enumerate(view.blocks):
            if isinstance(block, TextBlock):
                self._text(view, index, True)
        for card in view.tools.values():
            self._card(view, card)
        summary = view.empty_summary_text()
        if summary:
            self.errors.value += (
                f'<div style="background:#fff4e5; padding:4px"><b>No answer.</b> '
                f"{html.escape(summary)}</div>"
            )
        self._footer(view, elapsed, True)
        if self._handle is not None:  # the output becomes static
            self._handle.update(self._bundle(view, elapsed), raw=True)
            _close(self.root)  # nothing shows the widgets now: their comms go too


def _close(widget: Any) -> None:
    """Close a widget and every widget inside it (their models live in the kernel until then)."""
    for child in getattr(widget, "children", ()):
        _close(child)
    widget.close()
