"""External agents on a server several people reach (issue 44.3, DESIGN 10.1 and 10.4): a real
``jupyter server`` with an IdentityProvider and an Authorizer of the test (tests/jupyter_resolve/
people.py) where alice and carol may do everything, bob only use ``resolve``, and dave read and
write files but not run code; the SDK agent of ``agents/`` serves them all from one process.

- Only a caller who may read and write the files and run code in kernels is given an agent: a
  chat of another answers 403 ``agent_needs_permissions`` naming what is missing, and the agents
  listing shows them none and says why.
- The MCP token handed to the agent is its turn's: kept and used in a later turn (another
  person's session), it is refused.
- The agent's requests name a session: while alice's turn runs, carol's turn waits (one caller
  at a time per agent process), and once alice's turn ended a request naming her session is
  refused: carol's turn never reads as alice.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import Server
from tests.jupyter_resolve.people import people_config
from tests.launcher import JupyterServer

AGENTS = Path(__file__).parent / "agents"
PEOPLE = {
    "alice": ("alice-token-2f0c9d7e6b5a", ["*"]),
    "bob": ("bob-token-8e1d3c5a7f90", ["resolve"]),
    "carol": ("carol-token-4b6a2e9d1c83", ["*"]),
    "dave": ("dave-token-0a7c5e3b9d21", ["resolve", "contents"]),
}
PRIVATE = "alice's private note 6c1f"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServer]:
    work = tmp_path_factory.mktemp("acp-people")
    bench = [sys.executable, str(AGENTS / "bench_agent.py")]
    agents = {"bench": {"command": bench, "env": {"BENCH_STATE": str(work / "agent-state")}}}
    resolve = {"acp_agents": agents, "acp_start_timeout": 8.0, "approval_timeout": 4.0}
    config = {**people_config(PEOPLE), "Resolve": resolve}
    with JupyterServer(work, config=config, ready="health") as jupyter:
        (jupyter.root / "private.txt").write_text(PRIVATE)
        yield jupyter


def person(served: JupyterServer, name: str) -> Server:
    return Server(served.url, PEOPLE[name][0])


def agents_of(served: JupyterServer, name: str) -> dict[str, object]:
    answer = httpx.get(
        f"{served.url}/resolve/api/agents",
        headers={"Authorization": f"token {PEOPLE[name][0]}"},
        trust_env=False,
    )
    assert answer.status_code == 200, answer.text
    listed: dict[str, object] = answer.json()
    return listed


async def test_only_a_caller_with_all_three_permissions_gets_an_agent(
    served: JupyterServer,
) -> None:
    for name, lacking in (
        ("bob", "read the server's files (contents read), write the server's files"),
        ("dave", "you may not run code in kernels (kernels execute)"),
    ):
        refused = await person(served, name).chat("stream", agent="bench")
        assert refused.status == 403, refused.body
        error = json.loads(refused.body)["error"]
        assert error["code"] == "agent_needs_permissions" and lacking in error["message"]
        assert "Ask the server's administrator" in error["message"]
        listed = agents_of(served, name)
        assert listed["agents"] == [] and listed["locked"] is False
        assert lacking in str(listed["refused"])
    listed = agents_of(served, "alice")
    assert [a["name"] for a in listed["agents"]] == ["bench"]  # type: ignore[attr-defined]
    assert listed["refused"] is None
    allowed = await person(served, "alice").chat("stream", agent="bench")
    assert allowed.status == 200 and allowed.text() == "one two three"


async def test_a_turns_mcp_token_does_not_serve_a_later_turn(served: JupyterServer) -> None:
    first = await person(served, "alice").chat("mcp", agent="bench", session_id="s-alice-mcp")
    assert first.text().startswith("mcp:jupyter-resolve:200:"), first.text()
    later = await person(served, "carol").chat("mcpold", agent="bench", session_id="s-carol-mcp")
    assert later.text() == "mcpold:403"  # alice's turn ended: its token with it


async def test_a_request_naming_another_persons_session_is_refused(
    served: JupyterServer,
) -> None:
    alice, carol = person(served, "alice"), person(served, "carol")
    named = await alice.chat("session", agent="bench", session_id="s-alice-fs")
    agent_session = named.text().removeprefix("session:")
    waiting = await alice.chat(
        "wait", agent="bench", session_id="s-alice-fs", until=lambda e: e.event == "text.delta"
    )
    alice_run = waiting.events[0].data["run_id"]
    prompt = f"readas {agent_session} {served.root}/private.txt"
    started = await carol.chat(
        prompt, agent="bench", session_id="s-carol-fs", until=lambda e: e.event == "run.started"
    )
    carol_run = started.events[0].data["run_id"]
    cancelled = await alice.post(f"/resolve/api/runs/{alice_run}/cancel", {})
    assert cancelled.status_code == 200, cancelled.text
    path = f"/resolve/api/runs/{carol_run}/events"
    carols = await carol.stream(path, method="GET", headers={"Last-Event-ID": "0"})
    assert carols.events[-1].data["reason"] == "stop"
    assert carols.text().startswith("error:") and "is live" in carols.text(), carols.text()
    alices = await alice.stream(
        f"/resolve/api/runs/{alice_run}/events", method="GET", headers={"Last-Event-ID": "0"}
    )
    for stream in (carols, alices):
        assert PRIVATE not in json.dumps([e.data for e in stream.events])
    assert "fs.read_text_file" not in json.dumps([e.data for e in alices.events])
