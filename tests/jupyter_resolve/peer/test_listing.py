"""``ListTasks`` / ``tasks/list`` (pure): the call's filters as a run index query, its bad
params, and each version's shapes, over runs built from events as the run log holds them (the
paging itself, over a real server's index: tests/jupyter_resolve/test_run_index.py)."""

from __future__ import annotations

from typing import Any

import pytest

from jupyter_resolve.contracts.errors import RpcError
from jupyter_resolve.contracts.run_rows import encode_cursor
from jupyter_resolve.peer.jobs import Job
from jupyter_resolve.peer.listing import list_answer, list_params, run_query
from jupyter_resolve.peer.rendering import Version, artifact_update, status_update
from jupyter_resolve.runs.run import Run


def job(run_id: str, session: str, reason: str | None, text: str = "ok") -> Job:
    run = Run(run_id=run_id, session_id=session, soul=None, model="m", budget=4, log=None)
    run.emit("run.started", {"session_id": session})
    run.emit("text.delta", {"text": text})
    if reason is not None:
        run.emit("run.completed", {"reason": reason, "rounds": 1})
    return Job(peer="alpha", run=run, prompt="do it")


JOBS = [
    job("run-3", "s-1", None),
    job("run-2", "s-2", "cancelled"),
    job("run-1", "s-1", "stop", "the answer"),
]


def ids(result: dict[str, Any]) -> list[str]:
    return [t["id"] for t in result["tasks"]]


def answer(params: dict[str, Any], version: Version, history: int | None = None) -> Any:
    return list_answer(JOBS, "", len(JOBS), list_params(params), params, version, history)


def test_a_page_newest_first_with_v03_shapes() -> None:
    listed = answer({}, "0.3")
    assert ids(listed) == ["run-3", "run-2", "run-1"] and listed["totalSize"] == 3
    assert listed["nextPageToken"] == "" and listed["pageSize"] == 50
    assert [t["status"]["state"] for t in listed["tasks"]] == ["working", "canceled", "completed"]
    assert listed["tasks"][2]["artifacts"][0]["parts"] == [{"kind": "text", "text": "the answer"}]
    v1 = answer({"pageSize": 2}, "1.0", 0)
    assert "artifacts" not in v1["tasks"][2] and v1["tasks"][0]["history"] == []  # not asked


def test_filters_become_the_run_index_query() -> None:
    after = (1700000000.5, "run-9")
    wanted = list_params(
        {"contextId": "s-1", "status": "TASK_STATE_FAILED", "pageSize": "7"}
        | {"pageToken": encode_cursor(after)}
    )
    query = run_query("alpha", wanted)
    # a peer's contextId names a session in the peer's own namespace (issue 31.3)
    expected = ("alpha", "peer-alpha-s-1", 7, after)
    assert (query.peer, query.session_id, query.limit, query.before) == expected
    assert query.not_reasons == ("stop", "cancelled") and query.reasons is None
    assert run_query("alpha", list_params({"status": "completed"})).reasons == ("stop",)
    assert run_query("alpha", list_params({"status": "working"})).status == "running"
    assert run_query("alpha", list_params({"pageSize": 0})).limit == 50


@pytest.mark.parametrize(
    "params",
    [
        {"pageSize": 500},
        {"pageSize": "x"},
        {"pageToken": "nope"},
        {"pageToken": 3},
        {"status": "sleeping"},
        {"contextId": 1},
    ],
)
def test_bad_params_are_invalid_params(params: dict[str, Any]) -> None:
    with pytest.raises(RpcError) as info:
        list_params(params)
    assert info.value.code == -32602


def test_updates_in_each_version() -> None:
    finished = JOBS[2]
    v1 = artifact_update(finished, "piece", "1.0", append=True, last=False)["artifactUpdate"]
    assert v1["append"] is True and v1["artifact"]["parts"] == [{"text": "piece"}]
    v03 = artifact_update(finished, "piece", "0.3", append=False, last=True)
    assert v03["kind"] == "artifact-update" and v03["lastChunk"] is True
    assert status_update(finished, "0.3")["final"] is True
    assert status_update(finished, "1.0")["statusUpdate"]["status"]["state"] == (
        "TASK_STATE_COMPLETED"
    )
