"""Proposed cells in the view model (pure): ``notebook.proposal`` and ``notebook.decision``
(DESIGN 9.2) folded into a :class:`ProposalCard` beside the ``notebook_propose`` call's card.

The call's card uses the one status vocabulary: ``waiting`` while a person decides,
``approved`` once accepted (then ``done`` as the call completes), ``denied`` when rejected —
by a person or a timeout — and it stays denied (the result only tells the model so).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol


class _Card(Protocol):
    status: str


@dataclass
class ProposalCard:
    proposal_id: str
    call_id: str
    notebook: str = ""
    cells: list[dict[str, Any]] = field(default_factory=list)
    after_cell_id: str | None = None
    replace_cell_id: str | None = None
    note: str | None = None
    replaced_source: str | None = None
    decision: str | None = None  # accepted | rejected
    by: str | None = None
    reason: str | None = None
    edited: bool = False
    ran: bool = False

    def sources(self) -> str:
        """The proposed cells' text, one after the other."""
        return "\n\n".join(str(c.get("source", "")) for c in self.cells)

    def code(self) -> str:
        """The code cells' text, as the next input of ``%resolve``."""
        return "\n\n".join(
            str(c.get("source", "")) for c in self.cells if c.get("cell_type", "code") == "code"
        )

    def diff(self) -> str:
        """A unified diff against the replaced cell (or against nothing: all new)."""
        old = (self.replaced_source or "").splitlines(keepends=True)
        new = self.sources().splitlines(keepends=True)
        where = self.replace_cell_id or "new cell"
        lines = difflib.unified_diff(old, new, f"{self.notebook} ({where})", "proposed", n=3)
        return "".join(line if line.endswith("\n") else line + "\n" for line in lines)

    def decision_text(self) -> str:
        if self.decision is None:
            return "waiting for a person"
        by = " (no decision in time)" if self.by == "timeout" else ""
        extra = ", edited" if self.edited else ""
        extra += ", run" if self.ran else ""
        reason = f": {self.reason}" if self.reason else ""
        return f"{self.decision}{by}{extra}{reason}"


def fold_proposal(
    card_of: Callable[[str], _Card],
    proposals: dict[str, ProposalCard],
    kind: str,
    data: dict[str, Any],
) -> str:
    """Fold one ``notebook.*`` event; the call id of the card it changed."""
    if kind == "notebook.proposal":
        proposal = ProposalCard(str(data.get("proposal_id", "")), str(data.get("call_id", "")))
        proposal.notebook = str(data.get("notebook", ""))
        cells = data.get("cells")
        proposal.cells = (
            [c for c in cells if isinstance(c, dict)] if isinstance(cells, list) else []
        )
        for key in ("after_cell_id", "replace_cell_id", "note", "replaced_source"):
            value = data.get(key)
            setattr(proposal, key, str(value) if value is not None else None)
        proposals[proposal.proposal_id] = proposal
        card_of(proposal.call_id).status = "waiting"
        return proposal.call_id
    found = proposals.get(str(data.get("proposal_id", "")))
    if kind != "notebook.decision" or found is None:
        return ""
    found.decision = str(data.get("decision", ""))
    found.by = str(data.get("by", "person"))
    found.reason = str(data["reason"]) if data.get("reason") else None
    found.edited, found.ran = bool(data.get("edited")), bool(data.get("ran"))
    card_of(found.call_id).status = "approved" if found.decision == "accepted" else "denied"
    return found.call_id
