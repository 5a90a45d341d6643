"""``ListTasks`` / ``tasks/list`` (pure): filters, pages, and each version's shapes, over runs
built from events as the run log holds them."""

from __future__ import annotations

from typing import Any

import pytest

from jupyter_resolve.contracts.errors import RpcError
from jupyter_resolve.peer.jobs import Job
from jupyter_resolve.peer.listing import list_tasks
from jupyter_resolve.peer.rendering import artifact_update, status_update
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


def test_all_newest_first_with_v03_shapes() -> None:
    listed = list_tasks(JOBS, {}, "0.3", None)
    assert ids(listed) == ["run-3", "run-2", "run-1"] and listed["totalSize"] == 3
    assert listed["nextPageToken"] == ""
    assert [t["status"]["state"] for t in listed["tasks"]] == ["working", "canceled", "completed"]
    assert listed["tasks"][2]["artifacts"][0]["parts"] == [{"kind": "text", "text": "the answer"}]


def test_filters_and_pages() -> None:
    assert ids(list_tasks(JOBS, {"contextId": "s-1"}, "1.0", None)) == ["run-3", "run-1"]
    done = list_tasks(JOBS, {"status": "TASK_STATE_COMPLETED"}, "1.0", None)
    assert ids(done) == ["run-1"] and "artifacts" not in done["tasks"][0]  # not asked for
    first = list_tasks(JOBS, {"pageSize": 2}, "1.0", 0)
    assert ids(first) == ["run-3", "run-2"] and first["tasks"][0]["history"] == []
    rest = list_tasks(JOBS, {"pageSize": 2, "pageToken": first["nextPageToken"]}, "1.0", None)
    assert ids(rest) == ["run-1"] and rest["nextPageToken"] == ""


@pytest.mark.parametrize(
    "params",
    [{"pageSize": 500}, {"pageSize": "x"}, {"pageToken": "nope"}, {"status": "sleeping"}],
)
def test_bad_params_are_invalid_params(params: dict[str, Any]) -> None:
    with pytest.raises(RpcError) as info:
        list_tasks(JOBS, params, "1.0", None)
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
