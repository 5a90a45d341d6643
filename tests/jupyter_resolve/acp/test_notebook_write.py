"""How a written notebook becomes proposals (jupyter_resolve/acp/notebook_write.py, pure): cells
matched by id, else by position; changed, new, left out; texts that are no notebook."""

from __future__ import annotations

import json
from typing import Any

import pytest

from jupyter_resolve.acp.notebook_write import (
    Cell,
    NotebookTextError,
    outcome,
    parse_notebook,
    plan_proposals,
)
from jupyter_resolve.contracts.bodies import ToolResult

NOTEBOOK = [Cell("a", "code", "x = 3"), Cell("b", "markdown", "# x"), Cell("c", "code", "x")]


def text(cells: list[dict[str, Any]], minor: int = 5) -> str:
    full = [{"metadata": {}, **c} for c in cells]
    for cell in full:
        if cell["cell_type"] == "code":
            cell.update(outputs=[], execution_count=None)
    return json.dumps({"nbformat": 4, "nbformat_minor": minor, "metadata": {}, "cells": full})


def shape(written: list[Cell]) -> list[tuple[str, str | None, list[str], str | None]]:
    plan = plan_proposals(NOTEBOOK, written)
    return [
        (p.kind, p.replace_cell_id or p.after_cell_id, [c.source for c in p.cells], p.note)
        for p in plan.proposals
    ]


def test_changed_and_new_cells_by_id() -> None:
    written = [
        Cell("a", "code", "x = 4"),
        Cell("b", "markdown", "# x"),
        Cell(None, "code", "y = 1"),
        Cell(None, "code", "y"),
        Cell("c", "code", "x"),
    ]
    assert shape(written) == [
        ("replace", "a", ["x = 4"], None),
        ("new", "b", ["y = 1", "y"], None),  # consecutive new cells: one proposal
    ]


def test_new_cells_after_a_changed_cell_join_its_replacement() -> None:
    written = [Cell("a", "code", "x = 5"), Cell("n1", "code", "z"), *NOTEBOOK[1:]]
    assert shape(written) == [("replace", "a", ["x = 5", "z"], None)]


def test_cells_at_the_top_and_left_out() -> None:
    written = [Cell("new", "raw", "top"), NOTEBOOK[0], NOTEBOOK[2]]
    plan = plan_proposals(NOTEBOOK, written)
    assert shape(written) == [("new", None, ["top"], "these belong at the top, before cell 'a'")]
    assert plan.left_out == ["cell 'b'"]
    assert "not deleted" in plan.notes()[0]


def test_without_ids_cells_match_by_position() -> None:
    written = [Cell(None, "code", "x = 3"), Cell(None, "code", "# x"), Cell(None, "code", "x")]
    assert shape(written) == [("replace", "b", ["# x"], None)]  # its type changed
    unnamed = [Cell(None, c.cell_type, c.source) for c in NOTEBOOK]
    plan = plan_proposals(unnamed, [Cell("q", "code", "x = 9"), *NOTEBOOK[1:]])
    assert plan.proposals == [] and plan.without_id == ["cell 1 (no id)"]


def test_a_notebook_text_is_parsed_with_the_ids_it_gives() -> None:
    cells = parse_notebook(text([{"cell_type": "code", "id": "k", "source": ["a\n", "b"]}]))
    assert cells == [Cell("k", "code", "a\nb")]
    old = parse_notebook(text([{"cell_type": "markdown", "source": "m"}], minor=4))
    assert old == [Cell(None, "markdown", "m")]
    assert parse_notebook(text([{"cell_type": "code", "source": "s"}]))[0].id is None


@pytest.mark.parametrize(
    ("written", "why"),
    [
        ("{nope", "not JSON"),
        ("[]", "not a notebook"),
        ('{"nbformat": 3, "cells": []}', "nbformat 4"),
        (text([{"cell_type": "code", "source": "s", "id": "d"}] * 2), "more than once"),
        (text([{"cell_type": "chart", "source": "s"}]), "not a valid notebook"),
        (text([{"cell_type": "code", "source": "s", "id": "bad id"}]), "not a valid notebook"),
    ],
)
def test_texts_that_are_no_notebook(written: str, why: str) -> None:
    with pytest.raises(NotebookTextError, match=why):
        parse_notebook(written)


def test_the_answer_says_what_was_not_accepted() -> None:
    plan = plan_proposals(NOTEBOOK, [Cell("a", "code", "x = 4"), NOTEBOOK[1]])
    rejected = ToolResult(ok=False, output="notebook_propose: a person rejected it.\nmore")
    accepted, said, data = outcome("n.ipynb", plan, [rejected])
    assert not accepted and "cell 'a' changed: a person rejected it." in said
    assert "not deleted" in said and data["left_out"] == ["cell 'c'"]
    assert data["proposals"] == [{"kind": "replace", "cell_id": "a", "cells": 1, "accepted": False}]
    nothing = outcome("n.ipynb", plan_proposals(NOTEBOOK, NOTEBOOK), [])
    assert nothing[0] is True and "nothing to propose" in nothing[1]
