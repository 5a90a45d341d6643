"""Issue 31.3: a peer's conversations live in the peer's own namespace of sessions. A peer that
sends ``contextId: my-project`` before a person first uses the session ``my-project`` plants
nothing there: the person's transcript has no peer turn, the peer still continues its own
conversation by that name, and a name too long for an id is hashed."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from jupyter_resolve.contracts.ids import is_id
from jupyter_resolve.peer.sessions import context_of, session_for
from tests.conftest import Server
from tests.jupyter_resolve.peer.peerclient import PEERS, rpc


@pytest.fixture
def resolve_config() -> dict[str, Any]:
    return {"peer_secrets": PEERS}


def message(text: str, context: str) -> dict[str, Any]:
    return {
        "message": {"messageId": f"m-{text}", "role": "user", "parts": [{"text": text}]}
        | {"contextId": context}
    }


async def ended(gateway: Any, run_id: str) -> Any:
    run = gateway.runs.get(run_id)
    deadline = time.monotonic() + 60
    while not run.completed and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert run.completed
    return run


async def test_a_peer_cannot_plant_a_turn_in_a_persons_session(
    server: Server, gateway: Any
) -> None:
    planted = await rpc(server, "message/send", message("planted by a peer", "my-project"))
    task = planted["result"]
    assert task["contextId"] == "my-project"  # the peer's own name for its conversation
    peer_run = await ended(gateway, task["metadata"]["runId"])
    assert peer_run.session_id == "peer-alpha-my-project"

    stream = await server.chat("hello from the person", session_id="my-project")
    started = stream.of("run.started")[0]
    assert started["session_id"] == "my-project"
    await ended(gateway, started["run_id"])
    history = gateway.transcripts.history("my-project")
    assert history.peers == {None} and history.runs == 1
    said = " ".join(str(m.get("content", "")) for m in history.messages)
    assert "hello from the person" in said and "planted by a peer" not in said

    # the peer continues its conversation by the same name, in its own session
    again = await rpc(server, "message/send", message("and again", "my-project"))
    assert again["result"]["contextId"] == "my-project", again
    second = await ended(gateway, again["result"]["metadata"]["runId"])
    assert second.session_id == "peer-alpha-my-project"
    assert gateway.transcripts.history("peer-alpha-my-project").runs == 2
    listed = await rpc(server, "tasks/list", {"contextId": "my-project"})
    assert len(listed["result"]["tasks"]) == 2

    # another peer cannot reach into it, even by naming alpha's namespace
    beta = await rpc(server, "message/send", message("x", "my-project"), peer="beta")
    assert beta["result"]["contextId"] == "my-project"
    beta_run = await ended(gateway, beta["result"]["metadata"]["runId"])
    assert beta_run.session_id == "peer-beta-my-project"


async def test_without_a_context_the_server_makes_one_in_the_peers_namespace(
    server: Server, gateway: Any
) -> None:
    body = {"message": {"messageId": "m-1", "role": "user", "parts": [{"text": "hi"}]}}
    task = (await rpc(server, "message/send", body))["result"]
    run = await ended(gateway, task["metadata"]["runId"])
    assert run.session_id == f"peer-alpha-{task['contextId']}"


def test_long_names_are_hashed_and_name_the_same_session_again() -> None:
    long = "c" * 128
    session = session_for("alpha", long)
    assert is_id(session) and session.startswith("peer-alpha-h")
    assert session_for("alpha", context_of("alpha", session)) == session
    assert session_for("alpha", "x") != session_for("beta", "x")
    assert is_id(session_for("p" * 128, "x")) and session_for("jupyter:ann", "x") == "x"


async def test_a_person_cannot_chat_in_a_peers_namespace(server: Server, gateway: Any) -> None:
    planted = await rpc(server, "message/send", message("planted by a peer", "notes"))
    await ended(gateway, planted["result"]["metadata"]["runId"])
    chat = {"messages": [{"role": "user", "content": "hi"}], "session_id": "peer-alpha-notes"}
    refused = await server.post("/resolve/api/chat", chat)
    assert refused.status_code == 400, refused.text
    assert refused.json()["error"]["code"] == "peer_session"
    assert gateway.transcripts.history("peer-alpha-notes").runs == 1  # nothing added
    facade = {"messages": [{"role": "user", "content": "hi"}], "session_id": "peer-alpha-notes"}
    refused = await server.post("/resolve/v1/chat/completions", facade)
    assert refused.status_code == 400, refused.text
    assert gateway.transcripts.history("peer-alpha-notes").runs == 1
