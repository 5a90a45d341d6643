"""Runs belong to their owner (issue 44.2, DESIGN 10.2), on a real server with several people
(the IdentityProvider and Authorizer of tests/jupyter_resolve/people.py): alice may do
everything, bob only use ``resolve``, dave also read contents and reach kernels but not other
people's runs. Bob and dave see none of alice's runs — not in the listings, not their events,
her session's transcript, over MCP — and decide none of them (approve, cancel, a proposal, a
chat joining her session); the server's own runs stay visible to all; alice, whom the
Authorizer grants ``resolve-others``, sees and decides bob's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from jupyter_resolve.contracts.bodies import ChatRequest
from jupyter_resolve.providers import ScriptedProvider
from tests.conftest import SSE, Server
from tests.jupyter_resolve.mcp.test_mcp_server import connect
from tests.jupyter_resolve.people import with_people

TOKENS = {"alice-owns-5d1c": "alice", "bob-owns-9e2a": "bob", "dave-owns-44f0": "dave"}
GRANTS = {"alice": ["*"], "bob": ["resolve"], "dave": ["resolve", "contents", "kernels"]}


@pytest.fixture
def jp_server_config(jp_server_config: dict[str, Any]) -> dict[str, Any]:
    return with_people(jp_server_config, TOKENS, GRANTS)


def person(server: Server, name: str) -> Server:
    return Server(server.base, next(t for t, n in TOKENS.items() if n == name))


@pytest.fixture
def waiting(gateway: Any, tmp_path: Path) -> None:
    """Every run asks for a web_fetch (a person decides it), then answers."""
    script = tmp_path / "waiting.jsonl"
    turns = [
        {"content": "", "tool_calls": [{"name": "web_fetch", "arguments": {"url": "http://x/"}}]},
        {"content": "Done."},
    ]
    script.write_text("\n".join(json.dumps(t) for t in turns) + "\n")
    gateway.provider = ScriptedProvider(script)


async def waiting_run(who: Server, session_id: str) -> tuple[str, str]:
    """A run of ``who``'s, waiting for a decision on its call: (run_id, call_id)."""
    body = {"messages": [{"role": "user", "content": "fetch it"}], "session_id": session_id}
    stream = await who.stream("/resolve/api/chat", body, until=lambda e: e.event == "tool.approval")
    assert stream.status == 200, stream.body
    approval = stream.of("tool.approval")[0]
    return approval["run_id"], approval["call_id"]


async def test_another_persons_run_is_neither_seen_nor_decided(
    server: Server, gateway: Any, waiting: None
) -> None:
    alice, bob, dave = (person(server, n) for n in ("alice", "bob", "dave"))
    run_id, call_id = await waiting_run(alice, "alices-session")
    gateway.runs.indexed(10)

    for other in (bob, dave):
        listed = (await other.get("/resolve/api/runs")).json()["runs"]
        assert run_id not in [r["run_id"] for r in listed]
        sessions = (await other.get("/resolve/api/sessions")).json()["sessions"]
        assert "alices-session" not in [s["session_id"] for s in sessions]
        for path in (
            f"/resolve/api/runs/{run_id}/events",
            "/resolve/api/sessions/alices-session/transcript",
        ):
            answer = await other.get(path)
            assert answer.status_code == 404, (path, answer.text)
            assert "fetch it" not in answer.text
        for path, body in (
            (f"/resolve/api/runs/{run_id}/approvals/{call_id}", {"decision": "approve"}),
            (f"/resolve/api/runs/{run_id}/cancel", {}),
        ):
            answer = await other.post(path, body)
            assert answer.status_code == 404, (path, answer.text)
        joined = await other.post(
            "/resolve/api/chat",
            {"messages": [{"role": "user", "content": "and?"}], "session_id": "alices-session"},
        )
        assert joined.status_code == 403, joined.text
        assert joined.json()["error"]["code"] == "not_owner"
        task = await other.post("/resolve/api/tasks", {"goal": "g", "session_id": "alices-session"})
        assert task.status_code == 403, task.text

    # dave may reach notebooks and kernels, not alice's proposals
    proposal = await dave.post(f"/resolve/api/runs/{run_id}/proposals/p-1", {"decision": "reject"})
    assert proposal.status_code == 404, proposal.text

    run = gateway.runs.get(run_id)
    assert not run.completed  # nobody but alice decided anything
    assert run.owner == "alice"

    # alice sees hers and decides it
    mine = (await alice.get("/resolve/api/runs")).json()["runs"]
    assert run_id in [r["run_id"] for r in mine]
    approved = await alice.post(
        f"/resolve/api/runs/{run_id}/approvals/{call_id}", {"decision": "deny"}
    )
    assert approved.status_code == 200, approved.text


async def test_over_mcp_another_persons_run_is_not_there(
    server: Server, gateway: Any, waiting: None
) -> None:
    alice = person(server, "alice")
    run_id, _ = await waiting_run(alice, "alices-mcp-session")
    gateway.runs.indexed(10)
    async with connect(server, person(server, "bob").token) as client:
        listed = await client.call_tool("runs_list", {})
        assert run_id not in listed.content[0].text  # type: ignore[union-attr]
        events = await client.call_tool("run_events", {"run_id": run_id})
        assert events.is_error is True
        assert "fetch it" not in events.content[0].text  # type: ignore[union-attr]
        resources = await client.list_resources()
        assert f"resolve://runs/{run_id}" not in [str(r.uri) for r in resources.resources]
    async with connect(server, alice.token) as client:
        events = await client.call_tool("run_events", {"run_id": run_id})
        assert events.is_error is False
        assert "fetch it" in events.content[0].text  # type: ignore[union-attr]
    await gateway.launcher.cancel_run(run_id)


async def test_the_servers_own_runs_are_everyones_and_others_need_the_grant(
    server: Server, gateway: Any
) -> None:
    alice, bob = person(server, "alice"), person(server, "bob")
    own = gateway.start_chat(ChatRequest(messages=[{"role": "user", "content": "hi"}]))
    async for _event in own.watch():
        pass
    bobs = await bob.stream(
        "/resolve/api/chat", {"messages": [{"role": "user", "content": "mine"}]}
    )
    bobs_run = bobs.headers["X-Resolve-Run-Id"]
    gateway.runs.indexed(10)

    seen_by_bob = [r["run_id"] for r in (await bob.get("/resolve/api/runs")).json()["runs"]]
    assert own.run_id in seen_by_bob and bobs_run in seen_by_bob
    assert (await bob.get(f"/resolve/api/runs/{own.run_id}/events")).status_code == 200
    # alice may see other people's runs (her grant includes resolve-others)
    seen_by_alice = [r["run_id"] for r in (await alice.get("/resolve/api/runs")).json()["runs"]]
    assert bobs_run in seen_by_alice
    replay = await alice.stream(f"/resolve/api/runs/{bobs_run}/events", method="GET")
    assert replay.types()[-1] == "run.completed"
    assert isinstance(replay.events[0], SSE)
    # and may add to his session (execute on resolve-others); he to hers, not
    session = replay.events[0].data["session_id"]
    body = {"messages": [{"role": "user", "content": "go on"}], "session_id": session}
    assert (await alice.stream("/resolve/api/chat", body)).status == 200


async def test_what_is_promoted_from_a_run_is_its_owners(
    server: Server, gateway: Any, tmp_path: Path
) -> None:
    script = tmp_path / "listing.jsonl"
    turns = [
        {"content": "", "tool_calls": [{"name": "list_dir", "arguments": {}}]},
        {"content": "Listed."},
    ]
    script.write_text("\n".join(json.dumps(t) for t in turns) + "\n")
    gateway.provider = ScriptedProvider(script)
    alice, bob = person(server, "alice"), person(server, "bob")
    stream = await alice.stream(
        "/resolve/api/chat", {"messages": [{"role": "user", "content": "list"}]}
    )
    done = stream.of("tool.completed")[0]
    source = {"run_id": done["run_id"], "call_id": done["call_id"], "title": "alice's listing"}
    assert (await bob.post("/resolve/api/artifacts", source)).status_code == 404
    promoted = await alice.post("/resolve/api/artifacts", source)
    assert promoted.status_code == 201, promoted.text
    manifest = promoted.json()
    assert manifest["owner"] == "alice"
    art = manifest["id"]

    listed = (await bob.get("/resolve/api/artifacts")).json()["artifacts"]
    assert art not in [m["id"] for m in listed]
    for path in (f"{art}", f"{art}/content", f"{art}/crate", f"{art}/reproduce"):
        answer = await bob.get(f"/resolve/api/artifacts/{path}")
        assert answer.status_code == 404, (path, answer.text)
    assert (await bob.post(f"/resolve/api/artifacts/{art}/reproduce", {})).status_code == 404
    session = stream.of("run.started")[0]["session_id"]
    crate = await bob.get(f"/resolve/api/artifacts/crate?session={session}")
    assert crate.status_code == 404, crate.text
    async with connect(server, bob.token) as client:
        found = await client.call_tool("artifacts_list", {})
        assert art not in found.content[0].text  # type: ignore[union-attr]
        got = await client.call_tool("artifact_get", {"artifact_id": art})
        assert got.is_error is True

    mine = (await alice.get("/resolve/api/artifacts")).json()["artifacts"]
    assert art in [m["id"] for m in mine]
    assert (await alice.get(f"/resolve/api/artifacts/{art}/content")).status_code == 200
