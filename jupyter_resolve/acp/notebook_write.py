"""A notebook an external agent writes with ``fs/write_text_file`` (DESIGN 9.2, 10.1, 10.4): its
file is never written; its changes become proposals a person accepts or rejects.

The text must be an nbformat 4 notebook (not JSON, not a notebook, or invalid: the write is
refused, nothing is proposed). Its cells are compared (:func:`plan_proposals`, pure) with the
notebook's cells as the server's contents manager reads them: a written cell is the notebook's
cell with the same id, else (written without an id, or the notebook's cell there has none) the
cell at the same position. Then:

- a changed cell (its source or its type) is a ``replace`` proposal of that cell;
- new cells are one proposal ``after`` the cell before them (consecutive new cells together);
  new cells right after a changed cell join its replacement, so that they land after it
  whichever proposal is accepted first; new cells with no cell before them have no position
  (the panel puts them at the end) and their note says where they belong;
- a cell the text leaves out is not deleted (a person deletes cells) and is named in the answer;
- an unchanged cell is nothing, and outputs, metadata and execution counts are not compared.

Each proposal is a ``notebook_propose`` call of the run (call id ``fs-N.K``, inside the
``fs.write_text_file`` call ``fs-N``), with its ``notebook.proposal`` and, once a person decided
through ``POST /resolve/api/runs/{id}/proposals/{proposal_id}``, its ``notebook.decision``:
the panel shows each as a diff card. The agent's write waits for the decisions (each within
``c.Resolve.approval_timeout``, a timeout being a rejection) and answers success when every
proposal was accepted, else an error naming what was not.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..contracts.bodies import ToolCallRequest, ToolResult
from ..contracts.errors import BadRequest
from ..runs.run import Run
from .events import Emitted

if TYPE_CHECKING:
    from ..notebook.tools import NotebookHost

MAX_PROPOSALS = 32  # a write that would make more is refused: propose in smaller steps
PROPOSE = "notebook_propose"


class NotebookTextError(BadRequest, ValueError):
    """The written text is not a notebook this server can compare (the sentence says why)."""

    code = "not_a_notebook"


@dataclass(frozen=True)
class Cell:
    """A cell as the comparison sees it."""

    id: str | None
    cell_type: str
    source: str

    def proposed(self) -> dict[str, str]:
        return {"cell_type": self.cell_type, "source": self.source}

    def named(self, index: int) -> str:
        return f"cell '{self.id}'" if self.id else f"cell {index + 1} (no id)"


@dataclass
class Planned:
    """One proposal: the cells, and where they go (``replace_cell_id`` or ``after_cell_id``)."""

    cells: list[Cell]
    replace_cell_id: str | None = None
    after_cell_id: str | None = None
    note: str | None = None

    @property
    def kind(self) -> str:
        return "replace" if self.replace_cell_id else "new"

    def label(self) -> str:
        if self.replace_cell_id:
            extra = f" (and {len(self.cells) - 1} new after it)" if len(self.cells) > 1 else ""
            return f"cell '{self.replace_cell_id}' changed{extra}"
        where = f"after cell '{self.after_cell_id}'" if self.after_cell_id else "without a place"
        return f"{len(self.cells)} new cell(s) {where}"

    def arguments(self, notebook: str) -> dict[str, Any]:
        """``notebook_propose``'s arguments."""
        arguments: dict[str, Any] = {
            "notebook": notebook,
            "cells": [c.proposed() for c in self.cells],
        }
        for key in ("replace_cell_id", "after_cell_id", "note"):
            if getattr(self, key):
                arguments[key] = getattr(self, key)
        return arguments


@dataclass
class Plan:
    proposals: list[Planned] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)  # the notebook's cells the text drops
    without_id: list[str] = field(default_factory=list)  # changed, but no id to replace by

    def notes(self) -> list[str]:
        notes = []
        if self.left_out:
            notes.append(
                "cells the text leaves out are not deleted (a person deletes cells; nothing "
                f"was proposed for them): {', '.join(self.left_out)}"
            )
        if self.without_id:
            notes.append(
                "changed cells the notebook keeps without an id cannot be replaced by a "
                f"proposal (nbformat 4.4): {', '.join(self.without_id)}"
            )
        return notes


def _source(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value or "")


def parse_notebook(text: str) -> list[Cell]:
    """The written notebook's cells; :class:`NotebookTextError` for anything else."""
    import nbformat
    from nbformat.validator import ValidationError

    try:
        raw = json.loads(text)
    except ValueError as exc:
        raise NotebookTextError(f"the text is not JSON ({exc})") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("cells"), list):
        raise NotebookTextError("the text is not a notebook (a JSON object with 'cells')")
    if raw.get("nbformat") != 4:
        raise NotebookTextError("the text is not an nbformat 4 notebook ('nbformat': 4)")
    cells = raw["cells"]
    given = [c.get("id") if isinstance(c, dict) else None for c in cells]
    ids = [i for i in given if i is not None]
    repeated = sorted({str(i) for i in ids if ids.count(i) > 1})
    if repeated:
        raise NotebookTextError(f"cell ids appear more than once: {', '.join(repeated[:5])}")
    checked = json.loads(text)  # checked with every id filled in (nbformat warns otherwise)
    if isinstance(checked.get("nbformat_minor"), int) and checked["nbformat_minor"] >= 5:
        for cell in checked["cells"]:
            if isinstance(cell, dict) and "id" not in cell:
                cell["id"] = uuid.uuid4().hex
    try:
        nbformat.validate(checked)
    except ValidationError as exc:
        message = getattr(exc, "message", None) or str(exc)
        raise NotebookTextError(f"the text is not a valid notebook: {message[:300]}") from None
    return [
        Cell(i if isinstance(i, str) else None, str(c["cell_type"]), _source(c.get("source")))
        for c, i in zip(cells, given, strict=True)
    ]


def notebook_cells(content: dict[str, Any]) -> list[Cell]:
    """The cells of a notebook as the contents manager gives it (``model["content"]``)."""
    cells = content.get("cells") or []
    return [
        Cell(
            str(c["id"]) if c.get("id") else None,
            str(c.get("cell_type", "code")),
            _source(c.get("source")),
        )
        for c in cells
        if isinstance(c, dict)
    ]


def match_cells(current: list[Cell], written: list[Cell]) -> list[int | None]:
    """For each written cell, the index of the notebook's cell it is (None: a new cell)."""
    by_id = {c.id: index for index, c in enumerate(current) if c.id}
    matched: list[int | None] = [by_id.get(c.id) if c.id else None for c in written]
    taken = {m for m in matched if m is not None}
    for index, cell in enumerate(written):
        if matched[index] is not None or index >= len(current) or index in taken:
            continue
        if cell.id is None or current[index].id is None:  # no id to go by: its position
            matched[index] = index
            taken.add(index)
    return matched


def plan_proposals(current: list[Cell], written: list[Cell]) -> Plan:
    """What the written notebook asks of the current one, as proposals (see the module)."""
    plan = Plan()
    matched = match_cells(current, written)
    kept = {m for m in matched if m is not None}
    plan.left_out = [c.named(i) for i, c in enumerate(current) if i not in kept]
    last: Planned | None = None  # the proposal new cells may join
    before: int | None = None  # the notebook's cell before the next written one
    for cell, index in zip(written, matched, strict=True):
        if index is None:
            if last is None:
                last = _new_cells(current, before)
                plan.proposals.append(last)
            last.cells.append(Cell(None, cell.cell_type, cell.source))
            continue
        old = current[index]
        before, last = index, None
        if (old.cell_type, old.source) == (cell.cell_type, cell.source):
            continue
        if old.id is None:
            plan.without_id.append(old.named(index))
            continue
        last = Planned([Cell(None, cell.cell_type, cell.source)], replace_cell_id=old.id)
        plan.proposals.append(last)
    return plan


def _new_cells(current: list[Cell], before: int | None) -> Planned:
    """An empty proposal of new cells after the notebook's cell ``before`` (None: the top)."""
    if before is None:
        where = f"at the top, before {current[0].named(0)}" if current else None
        return Planned([], note=f"these belong {where}" if where else None)
    cell = current[before]
    if cell.id is None:
        return Planned([], note=f"these belong after {cell.named(before)}")
    return Planned([], after_cell_id=cell.id)


async def propose_plan(
    host: NotebookHost,
    run: Run,
    emit: Callable[[list[Emitted]], None],
    notebook: str,
    plan: Plan,
    call_id: str,
) -> list[ToolResult]:
    """Each planned proposal as a ``notebook_propose`` call of ``run`` (``call_id.K``), all put
    before the person at once; their results once every one is decided (or timed out)."""
    from ..notebook.tools import notebook_propose

    requests = []
    for number, planned in enumerate(plan.proposals, 1):
        sub = f"{call_id}.{number}"
        arguments = planned.arguments(notebook)
        emit(
            [
                ("tool.requested", {"call_id": sub, "name": PROPOSE, "arguments": arguments}),
                ("tool.started", {"call_id": sub, "name": PROPOSE}),
            ]
        )
        requests.append(
            ToolCallRequest(run_id=run.run_id, call_id=sub, name=PROPOSE, arguments=arguments)
        )

    async def one(request: ToolCallRequest) -> ToolResult:
        started = time.monotonic()
        result = await notebook_propose(host, request)
        result.ms = int((time.monotonic() - started) * 1000)
        done = {"call_id": request.call_id, "name": PROPOSE, **result.model_dump()}
        emit([("tool.completed", done)])
        return result

    return list(await asyncio.gather(*(one(r) for r in requests)))


def outcome(
    notebook: str, plan: Plan, results: list[ToolResult]
) -> tuple[bool, str, dict[str, Any]]:
    """Whether every proposal was accepted, the sentence for the agent (and the run), and the
    same as data (the answer's ``_meta``)."""
    rows = []
    said = []
    for planned, result in zip(plan.proposals, results, strict=True):
        first = (result.output.splitlines() or [""])[0].removeprefix(f"{PROPOSE}: ")[:300]
        said.append(f"{planned.label()}: {'accepted' if result.ok else first}")
        rows.append(
            {
                "kind": planned.kind,
                "cell_id": planned.replace_cell_id or planned.after_cell_id,
                "cells": len(planned.cells),
                "accepted": result.ok,
            }
        )
    accepted = all(r.ok for r in results)
    if results:
        head = (
            f"{notebook} is not written by fs/write_text_file; its changes went to a person as "
            f"{len(results)} proposal(s): " + "; ".join(said)
        )
        if accepted:
            head += " (accepted cells go into the notebook open in the person's JupyterLab)"
    else:
        head = f"{notebook}: no cell changed, nothing to propose"
    notes = plan.notes()
    text = ". ".join([head, *notes])
    data = {"notebook": notebook, "proposals": rows, "left_out": plan.left_out}
    return accepted, text, data
