"""The run index (DESIGN 10.2, issue 33) over real servers: a server beside 20,000 run logs
lists them a page at a time, newest first, with a cursor that works (the API, A2A ``tasks/list``
and MCP ``runs_list``), and lists its sessions; the index is rebuilt from the logs when its file
is deleted (by the server, and by ``jupyter resolve reindex``); a run whose server was SIGKILLed
is listed ``interrupted`` after a restart; retention deletes old logs but keeps those an
artifact's provenance names."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from jupyter_resolve.artifacts.records import AgentOrigin, Source
from jupyter_resolve.artifacts.store import ArtifactStore
from jupyter_resolve.peer.signing import signed_headers
from tests.launcher import REPO, JupyterServer
from tests.run_logs import Made, write_run_logs

MANY = 20_000
SECRET = "alpha-shared-secret-0123456789"


def wait_indexed(server: JupyterServer, timeout: float = 120.0) -> None:
    """Until the server's index has every log (its rebuild runs in the background)."""
    deadline = time.monotonic() + timeout
    while server.http is not None:
        if not server.http.get(f"{server.url}/resolve/api/runs?limit=1").json()["indexing"]:
            return
        assert time.monotonic() < deadline, "the run index was not rebuilt in time"
        time.sleep(0.2)


def start(workdir: Path, **config: Any) -> JupyterServer:
    resolve = {"peer_secrets": {"alpha": SECRET}, **config}
    return JupyterServer(workdir, config={"Resolve": resolve}, ready="health").__enter__()


@pytest.fixture(scope="module")
def many(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[JupyterServer, Made]]:
    workdir = tmp_path_factory.mktemp("many-runs")
    made = write_run_logs(workdir / "root" / ".resolve", MANY)
    server = start(workdir)
    try:
        wait_indexed(server)
        yield server, made
    finally:
        server.close()


def get(server: JupyterServer, path: str, **params: Any) -> httpx.Response:
    assert server.http is not None
    return server.http.get(f"{server.url}/{path}", params=params)


def test_a_page_of_runs_in_order_with_a_working_cursor(many: tuple[JupyterServer, Made]) -> None:
    server, made = many
    first = get(server, "resolve/api/runs").json()
    assert len(first["runs"]) == 50 and first["next"] and first["indexing"] is False
    assert first["runs"][0]["run_id"] == made.run_id(MANY - 1)  # the newest
    assert first["runs"][0]["prompt_tokens"] == 100 and first["runs"][0]["events"] == 4
    seen: list[str] = []
    cursor = None
    while True:
        page = get(server, "resolve/api/runs", limit=200, **({"before": cursor} if cursor else {}))
        assert page.status_code == 200, page.text
        body = page.json()
        seen += [r["run_id"] for r in body["runs"]]
        cursor = body["next"]
        if cursor is None:
            break
    assert seen == [made.run_id(i) for i in reversed(range(MANY))]
    session = get(server, "resolve/api/runs", session_id=made.session(7), limit=200).json()
    assert [r["run_id"] for r in session["runs"]] == [
        made.run_id(i) for i in reversed(range(MANY)) if made.session(i) == made.session(7)
    ]
    for bad in ({"before": "nonsense"}, {"limit": "0"}, {"limit": "500"}):
        assert get(server, "resolve/api/runs", **bad).status_code == 400


def test_sessions_are_listed_newest_first_a_page_at_a_time(
    many: tuple[JupyterServer, Made],
) -> None:
    server, made = many
    listed: list[dict[str, Any]] = []
    cursor = None
    while True:
        body = get(
            server, "resolve/api/sessions", limit=200, **({"before": cursor} if cursor else {})
        ).json()
        listed += body["sessions"]
        cursor = body["next"]
        if cursor is None:
            break
    assert len(listed) == made.sessions
    assert listed[0]["session_id"] == made.session(MANY - 1)
    assert listed[0]["runs"] == MANY // made.sessions
    last = [s["last_at"] for s in listed]
    assert last == sorted(last, reverse=True)
    assert listed[-1]["prompt"] == "question 0"


def a2a(server: JupyterServer, method: str, params: dict[str, Any]) -> dict[str, Any]:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
    url = f"{server.url}/resolve/peer/a2a"
    headers = signed_headers("alpha", SECRET, body, url=url, method="POST")
    answer: dict[str, Any] = httpx.post(url, content=body, headers=headers, timeout=60).json()
    return answer


def test_a2a_tasks_list_pages_a_peers_tasks(many: tuple[JupyterServer, Made]) -> None:
    server, made = many
    mine = [made.run_id(i) for i in reversed(range(MANY)) if made.of_peer(i)]
    seen: list[str] = []
    token = ""
    while True:
        result = a2a(server, "tasks/list", {"pageSize": 100, "pageToken": token})["result"]
        assert result["totalSize"] == made.peer_runs()
        seen += [t["id"] for t in result["tasks"]]
        token = result["nextPageToken"]
        if not token:
            break
    assert seen == mine
    assert result["tasks"][-1]["artifacts"][0]["parts"][0]["text"] == "answer 0"
    v1 = a2a(server, "ListTasks", {"pageSize": 3, "status": "TASK_STATE_FAILED"})["result"]
    assert v1["tasks"] == [] and v1["totalSize"] == 0
    bad = a2a(server, "tasks/list", {"pageToken": "42"})
    assert bad["error"]["code"] == -32602


async def test_mcp_runs_list_pages(many: tuple[JupyterServer, Made]) -> None:
    server, made = many
    http = httpx2.AsyncClient(headers=server.headers, timeout=60)
    async with Client(streamable_http_client(f"{server.url}/resolve/mcp", http_client=http)) as c:
        first = (await c.call_tool("runs_list", {"limit": 100})).structured_content
        assert first is not None
        second = (
            await c.call_tool("runs_list", {"limit": 100, "before": first["next"]})
        ).structured_content
        assert second is not None
        ids = [r["run_id"] for r in first["runs"] + second["runs"]]
        assert ids == [made.run_id(i) for i in reversed(range(MANY - 200, MANY))]
        bad = await c.call_tool("runs_list", {"before": "x"})
        assert bad.is_error


def all_runs(server: JupyterServer) -> list[dict[str, Any]]:
    runs: dict[str, Any] = get(server, "resolve/api/runs", limit=200).json()
    return list(runs["runs"])


def reindex(root: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "JUPYTER_CONFIG_DIR": str(root / "cfg")}
    argv = [sys.executable, "-c", "from jupyter_resolve.cli import main; main()", "reindex"]
    return subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, timeout=120)


def test_the_index_is_rebuilt_from_the_logs_when_its_file_is_deleted(tmp_path: Path) -> None:
    state = tmp_path / "root" / ".resolve"
    made = write_run_logs(state, 120, sessions=7)
    with start(tmp_path) as server:
        wait_indexed(server)
        before = all_runs(server)
    assert len(before) == 120 and before[0]["run_id"] == made.run_id(119)
    (state / "runs.sqlite").unlink()
    with start(tmp_path) as server:
        wait_indexed(server)
        assert all_runs(server) == before
    (state / "runs.sqlite").unlink()
    done = reindex(tmp_path / "root")
    assert done.returncode == 0 and "indexed 120 run(s)" in done.stdout, done.stderr
    with start(tmp_path) as server:
        assert all_runs(server) == before


def test_a_run_whose_server_was_killed_is_interrupted_after_restart(tmp_path: Path) -> None:
    script = tmp_path / "script.jsonl"
    turn = {"content": "", "tool_calls": [{"name": "python", "arguments": {"code": "1"}}]}
    script.write_text(json.dumps(turn) + "\n")
    config = {"script": str(script), "approval_policy": {"exec": "ask"}}
    server = start(tmp_path, **config)
    try:
        run_id = ""
        url = f"{server.url}/resolve/api/chat"
        body = {"messages": [{"role": "user", "content": "run it"}], "session_id": "s-kill"}
        with httpx.stream("POST", url, json=body, headers=server.headers, timeout=60) as reply:
            for line in reply.iter_lines():
                if line.startswith("data:") and not run_id:
                    run_id = json.loads(line[5:])["run_id"]
                if "waiting" in line:  # the run waits for a person's approval: it is live
                    break
            server.health()  # its runtime's pid is kept, to stop it at the end
            live = get(server, "resolve/api/runs", status="running").json()["runs"]
            assert [r["run_id"] for r in live] == [run_id]
            assert server.proc is not None
            os.killpg(server.proc.pid, signal.SIGKILL)
            server.proc.wait(10)
    finally:
        server.close()
    with start(tmp_path, **config) as again:
        (row,) = get(again, "resolve/api/runs", session_id="s-kill").json()["runs"]
        assert (row["run_id"], row["status"], row["reason"]) == (run_id, "completed", "interrupted")
        log = tmp_path / "root" / ".resolve" / "runs" / f"{run_id}.jsonl"
        assert json.loads(log.read_text().splitlines()[-1])["data"]["reason"] == "interrupted"


def test_retention_deletes_old_logs_but_keeps_those_an_artifact_names(tmp_path: Path) -> None:
    state = tmp_path / "root" / ".resolve"
    old = write_run_logs(state, 6, age_days=40)
    named = old.run_id(2)
    store = ArtifactStore(state / "artifacts")
    source = Source(kind="scratch", session_id=old.session(2), path="out.txt")
    origin = AgentOrigin(run_id=named, call_id="call-1", run_seq=2)
    store.promote(b"kept", "text/plain", source, created_by="test", agent=origin)
    recent = tmp_path / "recent"
    fresh = write_run_logs(recent, 2, sessions=1)
    for path in (recent / "runs").iterdir():
        path.rename(state / "runs" / path.name.replace("made", "new"))
    with start(tmp_path, run_retention_days=30) as server:
        deadline = time.monotonic() + 60
        while "run retention" not in server.log_text():
            assert time.monotonic() < deadline, server.log_tail()
            time.sleep(0.2)
        left = sorted(p.stem for p in (state / "runs").glob("*.jsonl"))
        assert left == sorted([named, *(fresh.run_id(i).replace("made", "new") for i in (0, 1))])
        assert "deleted 5 run log(s)" in server.log_text()
        assert "kept 1 an artifact's provenance names" in server.log_text()
        listed = {r["run_id"] for r in all_runs(server)}
        assert listed == set(left)
