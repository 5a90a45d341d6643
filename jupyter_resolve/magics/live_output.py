"""A running call's live output (``tool.output``, DESIGN 3.6) as a tool card holds and shows it.

What the call prints comes in pieces: text of one stream appends to the piece before it when
that piece is of the same stream, otherwise it starts a new one (so stdout and stderr keep their
order); a display is a piece of its own, and a display carrying the ``display_id`` of an earlier
one replaces it where it stood (as ``update_display`` does in a notebook). The call's
``tool.completed`` still carries the whole result, which views show in place of all this.

Pure: no I/O. :func:`live_outputs` gives the pieces as Output-widget outputs, every display
through :func:`.safe_html.tool_bundle` (the Output widget renders as trusted).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .safe_html import tool_bundle

TEXT_STREAMS = ("stdout", "stderr")


@dataclass
class LivePiece:
    """One stretch of one stream, or one display (its MIME bundle, or a note in ``text`` when
    the server did not send it live)."""

    stream: str  # "stdout" | "stderr" | "display"
    text: str = ""
    mime: dict[str, Any] | None = None
    display_id: str | None = None


@dataclass
class LiveOutput:
    """Everything a running call printed or displayed so far."""

    pieces: list[LivePiece] = field(default_factory=list)
    version: int = 0  # counts changes: a view shows the output again when it moved on

    def add(self, data: dict[str, Any]) -> bool:
        """Fold one ``tool.output`` event's data in; False when it held nothing to show."""
        stream, text = data.get("stream"), data.get("text")
        text = text if isinstance(text, str) else ""
        if stream in TEXT_STREAMS:
            if not text:
                return False
            last = self.pieces[-1] if self.pieces else None
            if last is not None and last.stream == stream:
                last.text += text
            else:
                self.pieces.append(LivePiece(str(stream), text))
        elif stream == "display":
            mime, display_id = data.get("mime"), data.get("display_id")
            piece = LivePiece(
                "display",
                text,
                dict(mime) if isinstance(mime, dict) and mime else None,
                display_id if isinstance(display_id, str) and display_id else None,
            )
            if piece.mime is None and not piece.text:
                return False
            self._put_display(piece)
        else:
            return False
        self.version += 1
        return True

    def _put_display(self, piece: LivePiece) -> None:
        if piece.display_id is not None:
            for index, old in enumerate(self.pieces):
                if old.display_id == piece.display_id:
                    self.pieces[index] = piece
                    return
        self.pieces.append(piece)

    def text(self) -> str:
        """All the text, in order: what was printed, and the notes displays left."""
        return "".join(piece.text for piece in self.pieces)

    def printed(self) -> str:
        """What was printed to stdout and stderr, in order."""
        return "".join(piece.text for piece in self.pieces if piece.stream in TEXT_STREAMS)


def display_note(mime: dict[str, Any]) -> str:
    """A display named in words, for where it cannot be shown (a terminal, plain Markdown)."""
    kinds = ", ".join(sorted(kind for kind in mime if kind != "text/plain")) or "text/plain"
    return f"[a display ({kinds}): shown in notebooks]"


def live_outputs(live: LiveOutput, *, allow_remote_images: bool = False) -> list[dict[str, Any]]:
    """The pieces as Output-widget outputs: printed text as stream outputs (a frontend marks
    stderr as such and renders stream text as text), each display as its safe bundle."""
    outputs: list[dict[str, Any]] = []
    for piece in live.pieces:
        if piece.stream in TEXT_STREAMS:
            outputs.append({"output_type": "stream", "name": piece.stream, "text": piece.text})
            continue
        bundle = tool_bundle(piece.mime or {}, allow_remote_images=allow_remote_images)
        plain = (piece.mime or {}).get("text/plain")
        if not bundle and plain is not None:
            bundle = {"text/plain": "".join(plain) if isinstance(plain, list) else str(plain)}
        if not bundle and piece.text:  # the server's note on a display it did not send live
            bundle = {"text/plain": piece.text}
        if bundle:
            outputs.append({"output_type": "display_data", "data": bundle, "metadata": {}})
    return outputs
