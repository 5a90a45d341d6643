"""A finished run as one static HTML document, laid out as its live widget was (issue 46.5).

When a run ends, ``%resolve`` replaces its widget with this through the display's id: a
widget's model lives only as long as the kernel, so after a reload with a new kernel, in
nbviewer or on GitHub the saved output would read "Error displaying widget". Everything in it
is escaped or passes :mod:`.safe_html`, as the widget's own parts do, and no element carries a
``style`` (CSS can fetch): the output renders as trusted in the notebook that ran it.
"""

from __future__ import annotations

import html
from typing import Any

from .live_output import live_outputs
from .proposal_view import ProposalCard
from .safe_html import markdown_html, tool_bundle
from .view_model import RunView, TextBlock, ToolCard


def pre(text: str) -> str:
    """Text shown as it is."""
    return f"<pre>{html.escape(text)}</pre>"


def proposal_html(proposal: ProposalCard) -> str:
    """A ``notebook_propose`` card's cells as a diff, with the person's decision."""
    note = f"<p><i>{html.escape(proposal.note)}</i></p>" if proposal.note else ""
    return f"{note}{pre(proposal.diff())}<p>{html.escape(proposal.decision_text())}</p>"


def bundle_html(bundle: dict[str, Any]) -> str:
    """A safe display bundle (:func:`.safe_html.tool_bundle`'s) as HTML."""
    if "text/html" in bundle:
        return str(bundle["text/html"])
    for mime, data in bundle.items():
        if mime.startswith("image/"):
            return f'<img src="data:{html.escape(mime)};base64,{html.escape(str(data))}">'
    plain = bundle.get("text/plain")
    return pre(str(plain)) if plain is not None else ""


def outputs_html(card: ToolCard, allow_remote_images: bool) -> str:
    """What the call printed, returned and displayed; for a call cut off with its run, what it
    printed and displayed until then."""
    if card.live.pieces and not card.has_result:
        parts = []
        for output in live_outputs(card.live, allow_remote_images=allow_remote_images):
            text = output.get("text")
            parts.append(pre(text) if text is not None else bundle_html(output["data"]))
        return "".join(parts)
    shown = ""
    if card.output:
        shown = pre(card.output + ("\n(output truncated)" if card.truncated else ""))
    return shown + bundle_html(tool_bundle(card.mime, allow_remote_images=allow_remote_images))


def card_html(view: RunView, card: ToolCard, allow_remote_images: bool) -> str:
    """One tool card: name and status, its arguments (a proposal: the diff), its output."""
    proposal = next((p for p in view.proposals.values() if p.call_id == card.call_id), None)
    body = proposal_html(proposal) if proposal is not None else pre(card.arguments_text())
    title = f"<b>🔧 {html.escape(card.name)}</b> {html.escape(card.status_text())}"
    outputs = outputs_html(card, allow_remote_images)
    return f"<fieldset><legend>{title}</legend>{body}{outputs}</fieldset>"


def header_html(view: RunView) -> str:
    soul = f" · soul {view.soul}" if view.soul else ""
    words = f"{view.model}{soul} · session {view.session_id} · {view.task_id or view.run_id}"
    return f"<p><small>{html.escape(words)}</small></p>"


def reasoning_html(view: RunView) -> str:
    if not view.reasoning.strip():
        return ""
    words = len(view.reasoning.split())
    title = f"Reasoning ({words:,} word{'s' if words != 1 else ''})"
    return f"<details><summary>{title}</summary>{pre(view.reasoning)}</details>"


def static_html(
    view: RunView, elapsed: float | None = None, *, allow_remote_images: bool = False
) -> str:
    """The whole run: header, reasoning, answer text and tool cards in order, errors, the
    empty-run summary, footer."""
    parts = [header_html(view), reasoning_html(view)]
    for block in view.blocks:
        if isinstance(block, ToolCard):
            parts.append(card_html(view, block, allow_remote_images))
        elif isinstance(block, TextBlock) and block.text.strip():
            parts.append(markdown_html(block.text, allow_remote_images=allow_remote_images))
    parts += [f"<p><b>Error:</b> {html.escape(e)}</p>" for e in view.errors]
    summary = view.empty_summary_text()
    if summary:
        parts.append(f"<p><b>No answer.</b> {html.escape(summary)}</p>")
    parts.append(f"<p><small><i>{html.escape(view.footer_text(elapsed))}</i></small></p>")
    return f'<div class="jupyter-resolve-run">{"".join(parts)}</div>'
