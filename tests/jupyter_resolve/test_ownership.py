"""Who sees and decides whose runs (contracts/ownership.py, pure; DESIGN 10.2), and the run
index's owner filter answering as the in-memory test does."""

from __future__ import annotations

import sqlite3

import pytest

from jupyter_resolve.contracts.bodies import RunInfo
from jupyter_resolve.contracts.errors import Forbidden, NotFound
from jupyter_resolve.contracts.ownership import Viewer
from jupyter_resolve.contracts.run_rows import RunQuery

BOB = Viewer("bob")
ADMIN_READS = Viewer("carol", sees_others=True)
ADMIN = Viewer("carol", sees_others=True, decides_others=True)
TOKEN = Viewer(None)  # an MCP-scoped token: no person


@pytest.mark.parametrize(
    ("viewer", "owner", "sees", "decides"),
    [
        (BOB, "bob", True, True),
        (BOB, None, True, True),  # the server's own: everyone's
        (BOB, "alice", False, False),
        (BOB, "peer:lab", False, False),
        (ADMIN_READS, "alice", True, False),
        (ADMIN, "alice", True, True),
        (TOKEN, None, True, True),
        (TOKEN, "alice", False, False),
    ],
)
def test_who_sees_and_decides(viewer: Viewer, owner: str | None, sees: bool, decides: bool) -> None:
    assert viewer.sees(owner) is sees
    assert viewer.decides(owner) is decides


def test_check_answers_404_for_what_is_not_seen_and_403_for_what_is_only_seen() -> None:
    with pytest.raises(NotFound, match="no run 'r1' in this server"):
        BOB.check("alice", "run 'r1'")
    with pytest.raises(Forbidden, match="resolve-others") as refused:
        ADMIN_READS.check("alice", "run 'r1'", deciding=True)
    assert refused.value.code == "not_owner"
    ADMIN.check("alice", "run 'r1'", deciding=True)
    BOB.check(None, "run 'r1'", deciding=True)


def info(run_id: str, owner: str | None) -> RunInfo:
    fields = {"session_id": "s", "soul": None, "model": "m", "status": "completed"}
    return RunInfo(run_id=run_id, **fields, reason="stop", started_at=1.0, events=2, owner=owner)


def test_the_owner_filter_in_sql_and_in_memory_agree() -> None:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE runs (run_id TEXT, owner TEXT, started_at REAL)")
    owners = {"r-alice": "alice", "r-bob": "bob", "r-none": None, "r-peer": "peer:lab"}
    db.executemany("INSERT INTO runs VALUES (?, ?, 1)", list(owners.items()))
    for viewer in (BOB, ADMIN, TOKEN):
        query = RunQuery(owners=viewer.owners())
        where, params = query.where()
        in_sql = {r[0] for r in db.execute(f"SELECT run_id FROM runs WHERE {where}", params)}
        in_memory = {
            run_id for run_id, owner in owners.items() if query.matches(info(run_id, owner))
        }
        assert in_sql == in_memory == {r for r, o in owners.items() if viewer.sees(o)}
