"""External agents over ACP (issue 36, DESIGN 10.4), end to end: a real ``jupyter server``
(tests/launcher.py) with agents written against the official SDK (``agents/``), driven through
the public HTTP API as the panel and ``%resolve`` drive it."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import SSE, Server, Stream
from tests.launcher import JupyterServer

AGENTS = Path(__file__).parent / "agents"
SECRET = "bench-secret-7d1f0a9e"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[JupyterServer, Server]]:
    work = tmp_path_factory.mktemp("acp")
    python = sys.executable
    agents = {
        "bench": {
            "command": [python, str(AGENTS / "bench_agent.py")],
            "env": {"BENCH_SECRET": SECRET, "BENCH_STATE": str(work / "agent-state")},
            "description": "the tests' agent",
        },
        "silent": {"command": [python, str(AGENTS / "silent_agent.py")]},
    }
    config = {"Resolve": {"acp_agents": agents, "acp_start_timeout": 8.0, "approval_timeout": 4.0}}
    with JupyterServer(work, config=config, ready="health") as jupyter:
        yield jupyter, Server(jupyter.url, jupyter.token)


@pytest.fixture
def server(served: tuple[JupyterServer, Server]) -> Server:
    return served[1]


@pytest.fixture
def root(served: tuple[JupyterServer, Server]) -> Path:
    return served[0].root


async def ask(server: Server, prompt: str, agent: str = "bench", **extra: object) -> Stream:
    stream = await server.chat(prompt, agent=agent, **extra)
    assert stream.status == 200, stream.body
    return stream


def waiting(event: SSE) -> bool:
    return event.event == "tool.approval" and event.data["state"] == "waiting"


async def rest_of(server: Server, run_id: str, after: int = 0) -> Stream:
    path = f"/resolve/api/runs/{run_id}/events"
    return await server.stream(path, method="GET", headers={"Last-Event-ID": str(after)})


def ends_once(stream: Stream, reason: str) -> None:
    assert stream.types().count("run.completed") == 1
    assert stream.events[-1].event == "run.completed"
    assert stream.events[-1].data["reason"] == reason, stream.events[-1].data
    ids = [e.id for e in stream.events]
    assert ids == list(range(ids[0], ids[0] + len(ids)))  # no gaps


async def test_agents_are_listed_in_the_panels_shape(server: Server) -> None:
    response = await server.get("/resolve/api/agents")
    assert response.status_code == 200
    assert response.json()["locked"] is False  # no policy switched agents off
    agents = response.json()["agents"]
    assert [a["name"] for a in agents] == ["bench", "silent"]
    for agent in agents:
        assert set(agent) == {"name", "description", "state", "error"}
        assert agent["state"] in ("idle", "running", "error")
    assert agents[0]["description"] == "the tests' agent"


async def test_streaming_text_is_a_run_like_any_other(server: Server) -> None:
    stream = await ask(server, "stream")
    started = stream.events[0]
    assert started.event == "run.started"
    assert started.data["agent"] == "bench" and started.data["soul"] is None
    assert started.data["prompt"] == "stream"
    assert started.data["permissions"]["contents_read"] is True
    assert len(stream.of("text.delta")) >= 3
    assert stream.text() == "one two three"
    thoughts = [d["text"] for d in stream.of("reasoning.delta")]
    assert "thinking it over" in thoughts
    assert any("- [ ] say three words" in t for t in thoughts)  # the plan, kept
    usage = stream.of("usage")
    assert {"context_tokens": 40, "context_window": 1000}.items() <= usage[0].items()
    assert usage[-1]["prompt_tokens"] == 11 and usage[-1]["completion_tokens"] == 7
    ends_once(stream, "stop")
    run_id = started.data["run_id"]
    replayed = await rest_of(server, run_id)  # a finished run replays from its log
    assert [(e.event, e.data) for e in replayed.events] == [
        (e.event, e.data) for e in stream.events
    ]
    tail = await rest_of(server, run_id, after=3)
    assert tail.events[0].id == 4 and tail.events[-1].event == "run.completed"
    listed = (await server.get("/resolve/api/agents")).json()["agents"]
    assert listed[0]["state"] == "running"


async def test_a_tool_call_with_a_diff(server: Server, root: Path) -> None:
    path = root / "notes.txt"
    stream = await ask(server, f"edit {path}")
    requested = stream.of("tool.requested")[0]
    assert requested["call_id"] == "edit-1" and requested["name"] == "edit"
    assert requested["title"] == f"Edit {path}"
    assert requested["arguments"] == {"path": str(path), "content": "gamma"}
    assert stream.of("tool.started")[0]["call_id"] == "edit-1"
    done = stream.of("tool.completed")[0]
    assert done["ok"] is True and done["kind"] == "edit"
    assert "-beta\n+gamma\n" in done["output"] and "replaced beta" in done["output"]
    assert done["content"][0] == {
        "type": "diff",
        "path": str(path),
        "oldText": "alpha\nbeta\n",
        "newText": "alpha\ngamma\n",
    }
    assert stream.types().index("tool.started") < stream.types().index("tool.completed")
    ends_once(stream, "stop")


@pytest.mark.parametrize(
    ("decision", "always", "chosen"),
    [("approve", False, "yes-once"), ("deny", True, "no-always"), ("approve", True, "yes-always")],
)
async def test_a_permission_request_is_an_approval(
    server: Server, decision: str, always: bool, chosen: str
) -> None:
    first = await server.chat("permission", agent="bench", until=waiting)
    approval = first.of("tool.approval")[0]
    assert approval["call_id"] == "run-1" and approval["name"] == "execute"
    assert approval["title"] == "Run make clean"
    assert [o["kind"] for o in approval["options"]][:2] == ["allow_once", "allow_always"]
    run_id = first.events[0].data["run_id"]
    body = {"decision": decision, "always": always}
    decided = await server.post(f"/resolve/api/runs/{run_id}/approvals/run-1", body)
    assert decided.status_code == 200, decided.text
    stream = await rest_of(server, run_id)
    final = stream.of("tool.approval")[-1]
    assert final["state"] == ("approved" if decision == "approve" else "denied")
    assert final["by"] == "person" and final.get("always", False) is always
    assert f"outcome:{chosen}" in stream.text()
    done = stream.of("tool.completed")[0]
    assert done["ok"] is (decision == "approve")
    ends_once(stream, "stop")


async def test_no_decision_in_time_is_a_rejection(server: Server) -> None:
    stream = await ask(server, "permission")  # nobody decides: approval_timeout is 4 s
    final = stream.of("tool.approval")[-1]
    assert final["state"] == "denied" and final["by"] == "timeout"
    assert "outcome:no-once" in stream.text()
    ends_once(stream, "stop")


async def test_files_inside_the_root_are_read_and_written(server: Server, root: Path) -> None:
    (root / "data").mkdir(exist_ok=True)
    (root / "data" / "in.txt").write_text("first\nsecond\nthird\n")
    stream = await ask(server, f"read {root}/data/in.txt")
    assert stream.text() == "content:first\nsecond\nthird\n"
    call = stream.of("tool.completed")[0]
    assert call["name"] == "fs.read_text_file" and call["ok"] is True
    assert "data/in.txt" in call["output"]
    some = await ask(server, f"read {root}/data/in.txt 2 1")
    assert some.text() == "content:second\n"
    wrote = await ask(server, f"write {root}/data/out.txt hello from the agent")
    assert wrote.text() == "wrote"
    assert (root / "data" / "out.txt").read_text() == "hello from the agent"
    assert wrote.of("tool.requested")[0]["arguments"]["characters"] == 20


@pytest.mark.parametrize(
    ("prompt", "why"),
    [
        ("read /etc/hostname", "outside the server root"),
        ("read {root}/../outside.txt", "outside the server root"),
        ("read data/in.txt", "not an absolute path"),
        ("read {root}/.hidden.txt", "hidden"),
        ("write /tmp/acp-escape.txt pwned", "outside the server root"),
        ("write {root}/../escape.txt pwned", "outside the server root"),
        ("write {root}/analysis.ipynb {{}}", "not a notebook"),
        ("write {root}/.hidden.txt pwned", "hidden"),
        ("write {root}/.resolve/mcp-tokens.json {{}}", "hidden"),
        ("read {root}/.resolve/mcp-tokens.json", "hidden"),
        # issue 44.3: links are followed; a notebook is one in any case, or behind a link
        ("read {root}/out-link/outside.txt", "leads outside the server root"),
        ("read {root}/outside-link.txt", "leads outside the server root"),
        ("write {root}/out-link/escape.txt pwned", "leads outside the server root"),
        ("write {root}/outside-link.txt pwned", "leads outside the server root"),
        ("read {root}/hidden-link.txt", "hidden"),
        ("write {root}/analysis-link.txt {{}}", "not a notebook"),
        ("write {root}/Upper.IPYNB {{}}", "not a notebook"),
    ],
)
async def test_files_outside_the_root_are_refused(
    server: Server, root: Path, prompt: str, why: str
) -> None:
    (root.parent / "outside.txt").write_text("secret outside")
    (root / ".hidden.txt").write_text("hidden")
    notebook = '{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": []}'
    (root / "analysis.ipynb").write_text(notebook)
    (root / "Upper.IPYNB").write_text(notebook)
    for link, target in [
        ("out-link", root.parent),
        ("outside-link.txt", root.parent / "outside.txt"),
        ("hidden-link.txt", root / ".hidden.txt"),
        ("analysis-link.txt", root / "analysis.ipynb"),
    ]:
        if not (root / link).is_symlink():
            (root / link).symlink_to(target)
    stream = await ask(server, prompt.format(root=root))
    assert stream.text().startswith("error:") and why in stream.text(), stream.text()
    call = stream.of("tool.completed")[0]
    assert call["ok"] is False and why in call["output"]
    assert "secret outside" not in json.dumps([e.data for e in stream.events])
    assert not (root.parent / "escape.txt").exists()
    assert not Path("/tmp/acp-escape.txt").exists()
    assert (root / ".hidden.txt").read_text() == "hidden"
    assert (root.parent / "outside.txt").read_text() == "secret outside"
    assert (root / "analysis.ipynb").read_text() == notebook  # never written, link or not
    assert (root / "Upper.IPYNB").read_text() == notebook
    ends_once(stream, "stop")


async def test_cancel_mid_prompt_sends_session_cancel(server: Server) -> None:
    first = await server.chat("wait", agent="bench", until=lambda e: e.event == "text.delta")
    run_id = first.events[0].data["run_id"]
    cancelled = await server.post(f"/resolve/api/runs/{run_id}/cancel", {})
    assert cancelled.status_code == 200 and cancelled.json()["run"]["reason"] == "cancelled"
    stream = await rest_of(server, run_id)
    assert stream.text() == "waiting stopped by the cancel"  # the agent heard session/cancel
    ends_once(stream, "cancelled")


async def test_a_session_is_one_agent_session(server: Server) -> None:
    first = await ask(server, "session", session_id="s-acp-one")
    second = await ask(server, "session", session_id="s-acp-one")
    other = await ask(server, "session", session_id="s-acp-two")
    assert first.text() == second.text() != other.text()
    assert first.events[0].data["session_id"] == "s-acp-one"


async def test_a_crash_is_a_run_error_and_the_next_run_restarts_it(server: Server) -> None:
    await ask(server, "remember apples", session_id="s-acp-crash")
    stream = await ask(server, "crash", session_id="s-acp-crash")
    error = stream.of("run.error")[0]
    assert error["code"] == "agent_died" and "exited with code 3" in error["message"]
    ends_once(stream, "error")
    health = (await server.get("/resolve/api/health")).json()["agents"]["bench"]
    assert health["state"] == "error" and "exited with code 3" in health["error"]
    assert "crashing, key [withheld" in health["stderr_tail"]
    assert SECRET not in json.dumps(health)
    listed = (await server.get("/resolve/api/agents")).json()["agents"][0]
    assert listed["state"] == "error" and "exited with code 3" in listed["error"]
    # started again, and the session loaded (session/load): its memory is there, and the
    # history the agent replays while loading is not put in the new run
    again = await ask(server, "recall", session_id="s-acp-crash")
    assert again.text() == "recalled:apples"
    ends_once(again, "stop")
    health = (await server.get("/resolve/api/health")).json()["agents"]["bench"]
    assert health["state"] == "running" and health["starts"] >= 2


async def test_an_agent_that_never_answers_initialize(server: Server) -> None:
    stream = await ask(server, "hello", agent="silent")
    error = stream.of("run.error")[0]
    assert error["code"] == "agent_unavailable"
    assert "did not answer initialize within 8 s" in error["message"]
    ends_once(stream, "error")
    listed = {a["name"]: a for a in (await server.get("/resolve/api/agents")).json()["agents"]}
    assert listed["silent"]["state"] == "error"
    health = await server.get("/resolve/api/health")
    assert health.status_code == 200  # the server is fine, and so is another agent
    assert (await ask(server, "stream")).text() == "one two three"


async def test_terminal_is_declined_by_default(server: Server) -> None:
    stream = await ask(server, "terminal")
    assert stream.text().startswith("declined:") and "acp_terminal" in stream.text()


async def test_the_agent_gets_this_servers_mcp_endpoint_for_a_turn(server: Server) -> None:
    stream = await ask(server, "mcp", session_id="s-acp-mcp")
    text = stream.text()
    assert text.startswith("mcp:jupyter-resolve:200:"), text
    assert "notebook_propose" in text and "runs_list" in text
    tokens = (await server.get("/resolve/api/mcp-tokens")).json()["tokens"]
    assert not [t for t in tokens if t["name"].startswith("acp agent bench")]  # revoked
    # the turn's token is dead after it; the session's next turn gets a new one (resumed)
    assert (await ask(server, "mcpold", session_id="s-acp-mcp")).text() == "mcpold:403"
    again = await ask(server, "mcp", session_id="s-acp-mcp")
    assert again.text().startswith("mcp:jupyter-resolve:200:"), again.text()


async def test_an_agents_refusal_ends_the_run_with_an_error(server: Server) -> None:
    stream = await ask(server, "refuse")
    assert stream.of("run.error")[0]["code"] == "agent_refused"
    ends_once(stream, "error")


async def test_chats_an_agent_cannot_take(server: Server) -> None:
    unknown = await server.chat("hi", agent="nobody")
    assert unknown.status == 400 and b"no external agent named 'nobody'" in unknown.body
    both = await server.chat("hi", agent="bench", soul="planner")
    assert both.status == 400
    bad = await server.chat("hi", agent="../x")
    assert bad.status == 400


async def test_a_sessions_turns_take_turns(server: Server) -> None:
    first = await server.chat(
        "wait", agent="bench", session_id="s-acp-turns", until=lambda e: e.event == "text.delta"
    )
    second = await server.chat(
        "session", agent="bench", session_id="s-acp-turns", until=lambda e: True
    )
    first_id, second_id = first.events[0].data["run_id"], second.events[0].data["run_id"]
    await asyncio.sleep(1.0)
    waiting_run = (await server.get("/resolve/api/runs", params={"status": "running"})).json()
    assert second_id in [r["run_id"] for r in waiting_run["runs"]]  # not prompted yet
    await server.post(f"/resolve/api/runs/{first_id}/cancel", {})
    stream = await rest_of(server, second_id)
    assert stream.text().startswith("session:bench-")
    ends_once(stream, "stop")
