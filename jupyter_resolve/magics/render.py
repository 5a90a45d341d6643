"""The plain-Markdown renderer: for terminal IPython and other places widgets cannot render.

It prints the run as it arrives — answer text as it streams, a block per tool call with the
lines the call prints while it runs (each prefixed ``[NAME]``, or ``[NAME stderr]``), the
empty-run summary and a footer — and asks on the terminal when a call waits for approval.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from .live_output import display_note
from .run_markdown import fence
from .view_model import Part, RunView, ToolCard

Decide = Callable[[str, str], str | None]  # (call_id, "approve" | "deny") → error or None
Ask = Callable[[str], str]


def _write_stdout(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


class MarkdownStream:
    """Prints Markdown incrementally; :meth:`update` is called after every folded event."""

    def __init__(
        self,
        *,
        write: Callable[[str], None] = _write_stdout,
        decide: Decide | None = None,
        ask: Ask | None = None,
    ) -> None:
        self.write = write
        self.decide = decide
        self.ask = ask
        self._printed: dict[int, int] = {}
        self._card_states: dict[str, str] = {}
        self._live_at: dict[str, tuple[int, int]] = {}  # call → (piece, characters) printed
        self._reasoning_noted = False
        self._at_line_start = True

    def _out(self, text: str) -> None:
        if text:
            self.write(text)
            self._at_line_start = text.endswith("\n")

    def _block_break(self) -> None:
        self._out("\n\n" if not self._at_line_start else "\n")

    def start(self) -> None:
        return None

    def tick(self, view: RunView) -> None:
        """A quiet spell: nothing is held back here (every piece is printed as it comes)."""
        return None

    def update(self, view: RunView, part: Part, key: str) -> None:
        if part == "text":
            index = int(key)
            block = view.blocks[index]
            if isinstance(block, ToolCard):
                return
            done = self._printed.get(index, 0)
            if done == 0 and index > 0:
                self._block_break()
            self._out(block.text[done:])
            self._printed[index] = len(block.text)
        elif part == "reasoning" and not self._reasoning_noted:
            self._reasoning_noted = True
            self._out("> *reasoning… (in `_resolve.events`)*\n\n")
        elif part == "tool":
            self._tool(view, view.tools[key])
        elif part == "output":
            card = view.tools[key]
            if card.call_id not in self._card_states:
                self._tool(view, card)
            self._live(card, whole=False)
        elif part == "error":
            self._block_break()
            self._out(f"**error** {view.errors[-1]}\n")

    def _tool(self, view: RunView, card: ToolCard) -> None:
        before = self._card_states.get(card.call_id)
        if before == card.status:
            return
        self._card_states[card.call_id] = card.status
        if before is None:
            self._block_break()
            self._out(f"**🔧 {card.name}**\n")
            args = card.arguments_text()
            if args and args not in ("null", "{}"):
                self._out(fence(args, "python" if card.name == "python" else "") + "\n")
        for proposal in view.proposals.values():
            if proposal.call_id == card.call_id and card.status == "waiting":
                self._out(fence(proposal.diff(), "diff") + "\n")
        if card.status == "waiting":
            self._out(f"*{card.name} is waiting for approval.*\n")
            self._ask(view, card)
        elif card.finished:
            self._live(card, whole=True)
            printed = card.live.printed()
            if card.output and printed and card.output.strip() == printed.strip():
                self._out(f"→ {card.status_text()} (its output is above)\n")
            else:
                self._out(f"→ {card.status_text()}\n")
                if card.output:
                    self._out(fence(card.output) + "\n")
            for mime in card.images:
                self._out(f"[{mime} output: shown in notebooks, kept in `_resolve.tool_calls`]\n")

    def _live(self, card: ToolCard, *, whole: bool) -> None:
        """Print the call's live output not printed yet: whole lines only while it runs (a
        line's end may come in a later event), the rest once it ended (``whole``)."""
        index, chars = self._live_at.get(card.call_id, (0, 0))
        pieces = card.live.pieces
        while index < len(pieces):
            piece, last = pieces[index], index == len(pieces) - 1
            if piece.mime is not None:
                self._live_lines(card, piece.stream, display_note(piece.mime))
            else:
                text = piece.text[chars:]
                if last and not whole:
                    text = text[: text.rfind("\n") + 1]
                self._live_lines(card, piece.stream, text)
                chars += len(text)
                if last and not whole:
                    break
            index, chars = index + 1, 0
        self._live_at[card.call_id] = (index, chars)

    def _live_lines(self, card: ToolCard, stream: str, text: str) -> None:
        tag = f"[{card.name}]" if stream != "stderr" else f"[{card.name} stderr]"
        if text and not self._at_line_start:
            self._out("\n")
        for line in text.splitlines():
            self._out(f"{tag} {line}\n")

    def _ask(self, view: RunView, card: ToolCard) -> None:
        if self.ask is None or self.decide is None:
            self._out(
                f"Approve or deny it from JupyterLab, or POST "
                f"/resolve/api/runs/{view.run_id}/approvals/{card.call_id}.\n"
            )
            return
        try:
            answer = self.ask(f"Approve {card.name}? [y/N] ")
        except (EOFError, OSError, RuntimeError, NotImplementedError) as exc:
            self._out(f"(cannot ask here: {type(exc).__name__}; approve it from JupyterLab)\n")
            return
        decision = "approve" if answer.strip().lower() in ("y", "yes") else "deny"
        error = self.decide(card.call_id, decision)
        if error:
            self._out(f"*could not send the decision: {error}*\n")

    def finish(self, view: RunView, elapsed: float | None) -> None:
        for card in view.tools.values():  # a call cut off with its run: its last line
            self._live(card, whole=True)
        summary = view.empty_summary_text()
        if summary:
            self._block_break()
            self._out(f"**No answer.** {summary}\n")
        self._block_break()
        self._out(f"*{view.footer_text(elapsed)}*\n")
