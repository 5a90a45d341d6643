"""The user's notebook (DESIGN 9.2), pure: mentions, proposed cells, a person's decision, the
mention block the model reads, and the texts a proposal's tool result tells the model.

A proposal is the person's gate itself: ``notebook_propose`` waits for a decision like an
approval (same timeout; a timeout is a rejection ``by: "timeout"``), and only an accepted cell
reaches the notebook.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .ids import Id
from .pathargs import PathArg

MAX_MENTIONS = 16
MAX_DESCRIPTION = 8 * 1024
MAX_CELLS = 32
MAX_CELL_SOURCE = 100_000
MENTIONS_OPEN = "--- variables the person mentioned (described from their kernel) ---"
MENTIONS_CLOSE = "--- end of mentioned variables ---"

CellType = Literal["code", "markdown", "raw"]


class Mention(BaseModel):
    """``@name`` in a chat message: a variable of the notebook's kernel. Without a
    ``description`` the gateway describes it in the notebook's kernel; ``%resolve`` sends the
    one it made in its own kernel."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=128)
    description: str | None = Field(default=None, max_length=MAX_DESCRIPTION)

    @field_validator("name")
    @classmethod
    def _identifier(cls, value: str) -> str:
        if not value.isidentifier():
            raise ValueError(f"{value!r} is not a Python identifier")
        return value


# The models of proposals and notebook tools are built on first use (defer_build): most
# servers never propose, and building them was a noticeable part of the extension's load.
class ProposedCell(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    cell_type: CellType = "code"
    source: str = Field(max_length=MAX_CELL_SOURCE)


class ProposeArguments(BaseModel):
    """``notebook_propose`` {notebook, cells, after_cell_id?, replace_cell_id?, note?}."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    notebook: PathArg
    cells: list[ProposedCell] = Field(min_length=1, max_length=MAX_CELLS)
    after_cell_id: str | None = Field(default=None, min_length=1, max_length=256)
    replace_cell_id: str | None = Field(default=None, min_length=1, max_length=256)
    note: str | None = Field(default=None, max_length=4000)


class NotebookArguments(BaseModel):
    """``notebook_variables`` {notebook}; ``inspect_variable`` and ``snapshot_variable`` add
    ``name``."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    notebook: PathArg
    name: str | None = Field(default=None, min_length=1, max_length=128)


class SeenTarget(BaseModel):
    """The replaced cell as the person saw it when deciding: its id and the sha256 of its
    source (UTF-8, hex), and ``base_sha256``, the sha256 of the source the proposal carried
    (its ``replaced_source``), from a page whose own unsaved edit may be what it showed. An
    accept whose target changed since is refused (DESIGN 9.2)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    cell_id: str = Field(min_length=1, max_length=256)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    base_sha256: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")


class ProposalDecisionRequest(BaseModel):
    """``POST /resolve/api/runs/{run_id}/proposals/{proposal_id}``."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    decision: Literal["accept", "reject"]
    run: bool = False
    cells: list[ProposedCell] | None = Field(default=None, min_length=1, max_length=MAX_CELLS)
    reason: str | None = Field(default=None, max_length=4000)
    seen: SeenTarget | None = None


class ProposalOutcome(BaseModel):
    """What became of a proposal: the endpoint's answer and the ``notebook.decision`` event."""

    model_config = ConfigDict(defer_build=True)

    proposal_id: Id
    decision: Literal["accepted", "rejected"]
    edited: bool = False
    ran: bool = False
    by: Literal["person", "timeout"] = "person"
    reason: str | None = None
    cells: list[ProposedCell] = Field(default_factory=list)
    outputs: list[list[dict[str, Any]]] | None = None
    execution_counts: list[int | None] | None = None
    #: accepted: each cell's ``metadata.resolve``, who wrote it and who accepted it
    #: (contracts/authorship.py), for the client to put into the cells
    authorship: list[dict[str, Any]] | None = None

    def answer(self) -> dict[str, Any]:
        """The endpoint's body (``authorship`` when accepted)."""
        fields = {"proposal_id", "decision", "edited", "ran", "outputs", "execution_counts"}
        if self.authorship is not None:
            fields.add("authorship")
        return self.model_dump(include=fields)

    def event(self) -> dict[str, Any]:
        """``notebook.decision`` {proposal_id, decision, edited, ran, by, reason?}."""
        data = self.model_dump(include={"proposal_id", "decision", "edited", "ran", "by"})
        if self.reason:
            data["reason"] = self.reason
        return data


def mention_block(text: str, mentions: list[Mention]) -> str:
    """The user's text, then the described mentions in one clearly delimited block."""
    if not mentions:
        return text
    parts = [f"@{m.name}:\n{m.description or ''}".rstrip() for m in mentions]
    return f"{text}\n\n{MENTIONS_OPEN}\n" + "\n\n".join(parts) + f"\n{MENTIONS_CLOSE}"


def decision_text(outcome: ProposalOutcome, notebook: str, timeout: float) -> str:
    """The head of the tool result: the decision, in words the model acts on."""
    if outcome.decision == "rejected":
        if outcome.by == "timeout":
            return (
                f"notebook_propose: not accepted: no one decided within {timeout:g} s, so it "
                f"counts as rejected; {notebook} is unchanged"
            )
        why = f" Their reason: {outcome.reason}" if outcome.reason else " They gave no reason."
        return f"notebook_propose: a person rejected the proposal; {notebook} is unchanged.{why}"
    head = f"notebook_propose: a person accepted the proposal into {notebook}"
    if outcome.edited:
        cells = "\n".join(
            f"[cell {i} ({c.cell_type})]\n{c.source}" for i, c in enumerate(outcome.cells, 1)
        )
        head += ", after editing it; the cells as accepted:\n" + cells
    else:
        head += " as proposed"
    if outcome.reason:
        head += f"\nTheir note: {outcome.reason}"
    return head + ("" if outcome.ran else "\nThe cells were not run.")
