"""Proposals of cells for the user's notebook: open one, wait for a person, take a decision.

A proposal waits like an approval (``c.Resolve.approval_timeout``; a timeout is a rejection
``by: "timeout"``; the run's end releases it, see ``runs/approvals.py``). Accepted with
``run: true``, its code cells run in the notebook's kernel before the decision is final, so the
tool result tells the model their outputs; a decision being made is not cut by the timeout.

A replace proposal is accepted only while its target cell still reads as the person saw it
(``seen``: the source's sha256): otherwise the answer is 409 ``stale_target`` with the cell's
current source, so the card shows the new diff and the person decides again (DESIGN 9.2). An
accept without ``seen`` (older clients, ``%resolve``) is taken as it is and logged.

Without collaboration a page's diff is against its own model, which may hold the person's
unsaved edit of the cell, not the saved file the server reads. Such a page adds
``seen.base_sha256``, the digest of the source the proposal carried: when the cell still reads
so (the file unchanged since the proposal), the difference is the person's own edit, which the
card showed and the page replaces, and the accept is taken. A base other than the proposal's
own counts for nothing.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from ..contracts.bodies import ToolResult
from ..contracts.errors import BadRequest, Conflict, NotFound
from ..contracts.notebook import ProposalDecisionRequest, ProposalOutcome, ProposedCell
from ..rooms import source_digest
from ..runs.manager import new_id
from ..runs.run import Run
from ..scratch.kernels import Execution
from ..tools.kernel import python_result
from .kernels import CellRun

MAX_KEPT = 4096  # decided proposals remembered (for a 409 rather than a 404)

State = Literal["waiting", "deciding", "decided", "ended"]
CellRunner = Callable[[str, list[str]], Awaitable[list[CellRun]]]
log = logging.getLogger(__name__)


@dataclass
class Proposal:
    proposal_id: str
    run_id: str
    call_id: str
    notebook: str
    cells: list[ProposedCell]
    future: asyncio.Future[Any]
    state: State = "waiting"
    replace_cell_id: str | None = None
    # sha256 of the target's source when the proposal was made (its ``replaced_source``)
    replaced_sha256: str | None = None

    def view(self) -> dict[str, Any]:
        """``GET .../proposals/{proposal_id}``, before the target's current source is added."""
        data: dict[str, Any] = {
            "proposal_id": self.proposal_id,
            "run_id": self.run_id,
            "call_id": self.call_id,
            "notebook": self.notebook,
            "state": self.state,
            "cells": [c.model_dump() for c in self.cells],
        }
        if self.replace_cell_id:
            data["replace_cell_id"] = self.replace_cell_id
        return data


class StaleTarget(Conflict):
    """409 ``stale_target``: the cell a replace proposal targets changed (or went away) since
    the person saw it; ``current`` is the cell now, for the new diff."""

    code = "stale_target"

    def __init__(self, message: str, *, cell_id: str, source: str | None) -> None:
        super().__init__(message)
        digest = source_digest(source) if source is not None else None
        self.current = {"cell_id": cell_id, "source": source, "sha256": digest}

    def to_json(self) -> dict[str, object]:
        return {**super().to_json(), "current": self.current}


TargetSource = Callable[[Proposal], Awaitable[str | None]]


def check_seen(proposal: Proposal, body: ProposalDecisionRequest, current: str | None) -> None:
    """Refuse accepting a replace whose target is not what the person saw (see the module)."""
    target = proposal.replace_cell_id
    if body.decision != "accept" or target is None:
        return
    if body.seen is None:
        log.info("proposal %s accepted without 'seen': its target is not checked", target)
        return
    if body.seen.cell_id != target:
        raise BadRequest(f"seen.cell_id: the proposal replaces cell '{target}', not that one")
    if current is None:
        raise StaleTarget(
            f"cell '{target}' is no longer in {proposal.notebook}: nothing to replace",
            cell_id=target,
            source=None,
        )
    now = source_digest(current)
    base = body.seen.base_sha256
    unchanged = base is not None and base == proposal.replaced_sha256 and now == base
    if now != body.seen.sha256 and not unchanged:
        raise StaleTarget(
            f"cell '{target}' of {proposal.notebook} changed since the proposal was shown: "
            "look at the new diff and decide again",
            cell_id=target,
            source=current,
        )


def check_target(notebook: str, field: str, cell_id: str | None, source: str | None) -> None:
    """BadRequest for a proposal naming (in ``field``) a cell its notebook lacks: ``source`` is
    that cell's as people see it now, None when there is no such cell. Taken, its cells would
    land where the model did not mean (the end), or replace nothing."""
    if cell_id and source is None:
        raise BadRequest(
            f"notebook_propose: {notebook} has no cell with id '{cell_id}' ({field}); leave "
            f"{field} out to add the cells at the end"
        )


class Proposals:
    """Every proposal of this gateway's runs, by id."""

    def __init__(self) -> None:
        self.by_id: OrderedDict[str, Proposal] = OrderedDict()

    def open(
        self,
        run: Run,
        call_id: str,
        notebook: str,
        cells: list[ProposedCell],
        replace_cell_id: str | None = None,
        replaced: str | None = None,
    ) -> Proposal:
        """``replaced``: the target's source as the proposal carries it."""
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        proposal = Proposal(new_id("proposal"), run.run_id, call_id, notebook, cells, future)
        proposal.replace_cell_id = replace_cell_id
        if replace_cell_id and replaced is not None:
            proposal.replaced_sha256 = source_digest(replaced)
        self.by_id[proposal.proposal_id] = proposal
        while len(self.by_id) > MAX_KEPT:
            self.by_id.popitem(last=False)
        run.proposals[proposal.proposal_id] = future
        return proposal

    async def wait(self, run: Run, proposal: Proposal, timeout: float) -> ProposalOutcome | None:
        """The decision; None when the run ended first (nothing is decided then)."""
        try:
            try:
                answer = await asyncio.wait_for(asyncio.shield(proposal.future), timeout)
            except asyncio.TimeoutError:
                if proposal.state == "deciding":  # a person's decision is being carried out
                    answer = await proposal.future
                else:
                    proposal.state = "decided"
                    answer = ProposalOutcome(
                        proposal_id=proposal.proposal_id, decision="rejected", by="timeout"
                    )
        finally:
            run.proposals.pop(proposal.proposal_id, None)
        if not isinstance(answer, ProposalOutcome):  # released: the run ended
            proposal.state = "ended"
            return None
        return answer

    def get(self, run_id: str, proposal_id: str) -> Proposal:
        proposal = self.by_id.get(proposal_id)
        if proposal is None or proposal.run_id != run_id:
            raise NotFound(f"run '{run_id}' has no proposal '{proposal_id}'")
        return proposal

    async def decide(
        self,
        run_id: str,
        proposal_id: str,
        body: ProposalDecisionRequest,
        runner: CellRunner,
        target: TargetSource | None = None,
    ) -> ProposalOutcome:
        """A person's decision: NotFound for an unknown proposal, Conflict once decided (or
        when its run ended), StaleTarget when a replaced cell changed since it was seen (its
        current source from ``target``); accepted with ``run``, the code cells run through
        ``runner``."""
        proposal = self.get(run_id, proposal_id)
        if proposal.state != "waiting" or proposal.future.done():
            why = "its run ended" if proposal.state == "ended" else "it was already decided"
            raise Conflict(f"proposal '{proposal_id}' is not waiting for a decision: {why}")
        proposal.state = "deciding"
        try:
            if target is not None and proposal.replace_cell_id and body.decision == "accept":
                check_seen(proposal, body, await target(proposal))
            outcome = await self._outcome(proposal, body, runner)
        except BaseException:
            proposal.state = "waiting"
            raise
        proposal.state = "decided"
        if not proposal.future.done():
            proposal.future.set_result(outcome)
        return outcome

    async def _outcome(
        self, proposal: Proposal, body: ProposalDecisionRequest, runner: CellRunner
    ) -> ProposalOutcome:
        cells = body.cells if body.cells is not None else proposal.cells
        outcome = ProposalOutcome(
            proposal_id=proposal.proposal_id,
            decision="accepted" if body.decision == "accept" else "rejected",
            edited=body.cells is not None and body.cells != proposal.cells,
            reason=body.reason or None,
            cells=cells,
        )
        if body.decision != "accept" or not body.run:
            return outcome
        code = [c.source for c in cells if c.cell_type == "code"]
        runs = iter(await runner(proposal.notebook, code))
        outputs: list[list[dict[str, Any]]] = []
        counts: list[int | None] = []
        for cell in cells:
            ran = next(runs, None) if cell.cell_type == "code" else None
            outputs.append(ran.outputs if ran else [])
            counts.append(ran.execution_count if ran else None)
        return outcome.model_copy(
            update={"ran": True, "outputs": outputs, "execution_counts": counts}
        )


def released(proposal: Proposal) -> ToolResult:
    return ToolResult(
        ok=False,
        output=f"notebook_propose: the run ended before a decision; {proposal.notebook} "
        "is unchanged",
    )


def outputs_text(outcome: ProposalOutcome, timeout: float) -> tuple[str, dict[str, Any] | None]:
    """The accepted cells' outputs for the model, bounded like ``python`` (images noted), and
    the last rich bundle for clients."""
    if not outcome.ran or outcome.outputs is None:
        return "", None
    parts: list[str] = []
    bundle: dict[str, Any] | None = None
    counts = outcome.execution_counts or []
    for index, (cell, outputs) in enumerate(zip(outcome.cells, outcome.outputs, strict=False)):
        if cell.cell_type != "code":
            continue
        count = counts[index] if index < len(counts) else None
        label = f"[cell {index + 1}, In [{count if count is not None else ' '}]]"
        result = python_result(execution_of(outputs), timeout)
        parts.append(f"{label}\n{result.output or '(no output)'}")
        bundle = result.mime or bundle
    return "\n".join(parts), bundle


def execution_of(outputs: list[dict[str, Any]]) -> Execution:
    """nbformat outputs as the scratch kernel's :class:`Execution`, to word them alike."""
    execution = Execution()
    for output in outputs:
        kind = output.get("output_type")
        if kind == "stream" and output.get("name") == "stderr":
            execution.stderr += str(output.get("text", ""))
        elif kind == "stream":
            execution.stdout += str(output.get("text", ""))
        elif kind in ("display_data", "execute_result"):
            execution.outputs.append(dict(output.get("data") or {}))
        elif kind == "error":
            execution.error = f"{output.get('ename')}: {output.get('evalue')}"
    return execution
