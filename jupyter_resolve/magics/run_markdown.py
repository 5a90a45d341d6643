"""A run as one Markdown document (terminals, nbconvert, the widget's plain fallback): the
reasoning quoted, each tool card with its arguments and output fenced, the answer, the footer."""

from __future__ import annotations

from typing import Any

from .live_output import display_note
from .view_model import RunView, ToolCard


def fence(text: str, lang: str = "") -> str:
    """``text`` in a code fence longer than any run of backticks inside it."""
    ticks = "```"
    while ticks in text:
        ticks += "`"
    return f"{ticks}{lang}\n{text.rstrip()}\n{ticks}"


def card_markdown(card: ToolCard, *, inline_images: bool = False) -> str:
    """A tool card as Markdown (terminal, nbconvert, the widget's plain fallback)."""
    lines = [f"**🔧 {card.name or 'tool'}** — {card.status_text()}"]
    lang = "python" if card.name == "python" else ""
    args = card.arguments_text()
    if args and args not in ("null", "{}"):
        lines.append(fence(args, lang))
    if card.output:
        note = "\n(output truncated)" if card.truncated else ""
        lines.append(fence(card.output) + note)
    elif not card.has_result and card.live.pieces:  # cut off, or still running: what it printed
        lines.append(fence(live_markdown_text(card)))
    for mime, data in card.images.items():
        if inline_images:
            lines.append(f"![{card.name} output]({image_data_uri(mime, data)})")
        else:
            lines.append(f"[{mime} output: shown in notebooks]")
    return "\n\n".join(lines)


def live_markdown_text(card: ToolCard) -> str:
    """A call's live output as text: its prints, each display named."""
    return "".join(
        display_note(piece.mime) + "\n" if piece.mime is not None else piece.text
        for piece in card.live.pieces
    )


def image_data_uri(mime: str, data: Any) -> str:
    import base64

    if mime == "image/svg+xml":
        raw = data if isinstance(data, str) else "".join(data)
        return "data:image/svg+xml;base64," + base64.b64encode(raw.encode()).decode()
    return f"data:{mime};base64,{str(data).strip()}"


def to_markdown(view: RunView, *, elapsed: float | None = None, inline_images: bool = False) -> str:
    """The whole run as one Markdown document: reasoning, tool cards, answer, footer."""
    blocks: list[str] = []
    if view.reasoning.strip():
        quoted = "\n".join(f"> {line}" for line in view.reasoning.strip().splitlines())
        blocks.append(f"> *reasoning*\n>\n{quoted}")
    for block in view.blocks:
        if isinstance(block, ToolCard):
            blocks.append(card_markdown(block, inline_images=inline_images))
        elif block.text.strip():
            blocks.append(block.text.strip())
    blocks.extend(f"**error** {e}" for e in view.errors)
    summary = view.empty_summary_text()
    if summary:
        blocks.append(f"**No answer.** {summary}")
    blocks.append(f"*{view.footer_text(elapsed)}*")
    return "\n\n".join(blocks) + "\n"
