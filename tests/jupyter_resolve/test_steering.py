"""Steering a run while it works (issue 50.1, 50.3), on a real server and runtime with the fake
OpenAI server recording what the provider receives: a message posted while a 6 s tool call runs
reaches the next inference request as a user turn after the call's result, is logged as
``run.message`` where it took effect (the log, a replay, the session's transcript), and is
refused for someone else's run (tests/jupyter_resolve/people.py) and for an ended run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SSE, Server
from tests.fakes._server import Part
from tests.fakes.openai_server import DONE, chunk, sse, stream, text_reply, usage
from tests.jupyter_resolve.people import with_people
from tests.jupyter_resolve.test_sessions import provider, recording

__all__ = ["recording"]  # the fixture, used by name

TOKENS = {"alice-steers-77a1": "alice", "bob-steers-1c3e": "bob"}
GRANTS = {"alice": ["*"], "bob": ["resolve"]}
STEER = "not that column — use body_mass_g"
SLOW_CODE = "import time\ntime.sleep(6)\nprint('slept')"


@pytest.fixture
def jp_server_config(jp_server_config: dict[str, Any]) -> dict[str, Any]:
    return with_people(jp_server_config, TOKENS, GRANTS)


def person(server: Server, name: str) -> Server:
    return Server(server.base, next(t for t, n in TOKENS.items() if n == name))


def python_call(code: str, call_id: str = "call_slow") -> Any:
    """A round that asks for one python call, on the wire as OpenAI streams it."""
    first = {
        "index": 0,
        "id": call_id,
        "type": "function",
        "function": {"name": "python", "arguments": json.dumps({"code": code})},
    }
    return stream(
        [
            sse(chunk({"role": "assistant", "content": ""})),
            sse(chunk({"tool_calls": [first]})),
            sse(chunk({}, "tool_calls")),
            sse(usage()),
            DONE,
        ]
    )


async def run_until(who: Server, session: str, event: str) -> tuple[str, list[SSE]]:
    """Start a chat of ``who``'s and read it until ``event``: (run_id, the events so far)."""
    body = {"messages": [{"role": "user", "content": "plot the penguins"}], "session_id": session}
    got = await who.stream("/resolve/api/chat", body, until=lambda e: e.event == event)
    assert got.status == 200, got.body
    return got.of("run.started")[0]["run_id"], got.events


async def rest_of(who: Server, run_id: str, after: int = 0) -> list[SSE]:
    replay = await who.stream(f"/resolve/api/runs/{run_id}/events?after={after}", method="GET")
    assert replay.status == 200, replay.body
    return replay.events


async def test_a_message_reaches_the_next_round_and_stays_where_it_took_effect(
    server: Server, gateway: Any, recording: list[Any]
) -> None:
    fake = await provider(gateway, recording, [python_call(SLOW_CODE), text_reply("Done.")])
    alice, bob = person(server, "alice"), person(server, "bob")
    run_id, first = await run_until(alice, "s-steer", "tool.started")

    # bob may not steer alice's run: not there for him
    refused = await bob.post(f"/resolve/api/runs/{run_id}/messages", {"text": "stop"})
    assert refused.status_code == 404, refused.text
    posted = await alice.post(f"/resolve/api/runs/{run_id}/messages", {"text": STEER})
    assert posted.status_code == 202, posted.text
    queued = posted.json()
    assert queued["status"] == "queued" and queued["run_id"] == run_id
    assert len(fake.requests) == 1  # the call is still running: nothing asked meanwhile

    events = [*first, *await rest_of(alice, run_id, after=first[-1].id or 0)]
    types = [e.event for e in events]
    delivered = [e.data for e in events if e.event == "run.message"]
    assert delivered == [{"run_id": run_id, "id": queued["id"], "text": STEER}]
    at = types.index("run.message")
    assert types.index("tool.completed") < at < types.index("text.delta"), types
    assert types[-1] == "run.completed"
    completed = events[-1].data
    assert completed["reason"] == "stop" and completed["rounds"] == 2
    assert "undelivered_messages" not in completed

    # the next inference request: the call, its result, then the message as a user turn
    sent = fake.requests[1].body["messages"]
    assert [m["role"] for m in sent[-3:]] == ["assistant", "tool", "user"]
    assert sent[-2]["content"].strip() == "slept" and sent[-1] == {"role": "user", "content": STEER}
    assert len(fake.requests) == 2

    # the run log, a replay and the session's transcript have it where it took effect
    log = Path(gateway.runs.runs_dir / f"{run_id}.jsonl").read_text().splitlines()
    logged = [json.loads(line) for line in log]
    assert next(e for e in logged if e.get("type") == "run.message")["data"]["text"] == STEER
    replay = await rest_of(alice, run_id)
    assert [(e.id, e.event, e.data) for e in replay] == [(e.id, e.event, e.data) for e in events]
    transcript = (await alice.get("/resolve/api/sessions/s-steer/transcript")).json()["messages"]
    roles = [m["role"] for m in transcript]
    assert roles == ["user", "assistant", "tool", "user", "assistant"]
    assert transcript[3] == {"role": "user", "content": STEER}

    # an ended run takes none
    late = await alice.post(f"/resolve/api/runs/{run_id}/messages", {"text": "and the median?"})
    assert late.status_code == 409, late.text
    assert late.json()["error"]["code"] == "run_ended"


async def test_bad_messages_are_refused_and_bounded(
    server: Server, gateway: Any, recording: list[Any]
) -> None:
    await provider(gateway, recording, [python_call(SLOW_CODE), text_reply("Done.")])
    alice = person(server, "alice")
    run_id, _ = await run_until(alice, "s-steer-bounds", "tool.started")
    path = f"/resolve/api/runs/{run_id}/messages"
    for body, status, code in (
        ({"text": "   "}, 400, "bad_request"),
        ({"text": 1}, 400, "bad_request"),
        ({"text": "x", "more": 1}, 400, "bad_request"),
        ({"text": "x" * 10_001}, 413, "message_too_large"),
    ):
        answer = await alice.post(path, body)
        assert answer.status_code == status, (body, answer.text)
        assert answer.json()["error"]["code"] == code
    for i in range(8):
        assert (await alice.post(path, {"text": f"note {i}"})).status_code == 202
    ninth = await alice.post(path, {"text": "one more"})
    assert ninth.status_code == 429, ninth.text
    assert ninth.json()["error"]["code"] == "too_many_messages" and ninth.headers["Retry-After"]
    assert (
        await alice.post("/resolve/api/runs/run-nope/messages", {"text": "x"})
    ).status_code == 404
    events = await rest_of(alice, run_id)
    assert [e.data["text"] for e in events if e.event == "run.message"] == [
        f"note {i}" for i in range(8)
    ]


def slow_text(first: str, rest: str, pause: float = 3.0) -> Any:
    """An answer without calls whose second piece comes ``pause`` seconds after its first."""
    return stream(
        [
            sse(chunk({"role": "assistant", "content": first})),
            Part(sse(chunk({"content": rest})), delay=pause),
            sse(chunk({}, "stop")),
            sse(usage()),
            DONE,
        ]
    )


async def test_a_steered_round_counts_against_the_budget(
    server: Server, gateway: Any, recording: list[Any]
) -> None:
    """A message that comes while the model answers without calls gets a round of its own, the
    answer kept before it; with no round left it is not delivered, and run.completed says so."""
    fake = await provider(gateway, recording, [slow_text("Plotting", " done."), text_reply("Ok.")])
    alice = person(server, "alice")
    gateway.config.max_rounds = 2
    try:
        run_id, first = await run_until(alice, "s-steer-budget", "text.delta")
        posted = await alice.post(f"/resolve/api/runs/{run_id}/messages", {"text": "table only"})
        assert posted.status_code == 202, posted.text
        events = await rest_of(alice, run_id, after=first[-1].id or 0)
        completed = events[-1].data
        assert completed["rounds"] == 2 and completed["reason"] == "stop"
        sent = fake.requests[1].body["messages"]
        assert sent[-2:] == [
            {"role": "assistant", "content": "Plotting done."},
            {"role": "user", "content": "table only"},
        ]

        gateway.config.max_rounds = 1
        fake.scenario, fake.accepted = [slow_text("Plotting", " done.")], 0
        run_id, first = await run_until(alice, "s-steer-last", "text.delta")
        posted = await alice.post(f"/resolve/api/runs/{run_id}/messages", {"text": "table only"})
        assert posted.status_code == 202, posted.text
        events = await rest_of(alice, run_id, after=first[-1].id or 0)
        assert not [e for e in events if e.event == "run.message"]
        completed = events[-1].data
        assert completed["rounds"] == 1
        assert completed["undelivered_messages"] == [posted.json()["id"]]
    finally:
        gateway.config.max_rounds = 8


async def test_a_message_to_a_task_goes_to_its_running_step(
    server: Server, gateway: Any, recording: list[Any]
) -> None:
    fake = await provider(gateway, recording, [python_call(SLOW_CODE), text_reply("Found.")])
    alice = person(server, "alice")
    body = {"goal": "plot the penguins", "chain": ["specialist"]}
    started = await alice.stream(
        "/resolve/api/tasks", body, until=lambda e: e.event == "tool.started"
    )
    task_id = started.events[0].data["task_id"]
    step = started.of("run.started")[0]["run_id"]
    posted = await alice.post(f"/resolve/api/tasks/{task_id}/messages", {"text": STEER})
    assert posted.status_code == 202, posted.text
    assert posted.json()["task_id"] == task_id and posted.json()["run_id"] == step
    events = await alice.stream(f"/resolve/api/tasks/{task_id}/events", method="GET")
    delivered = events.of("run.message")
    assert len(delivered) == 1 and delivered[0]["text"] == STEER
    assert delivered[0]["run_id"] == step and delivered[0]["role"] == "specialist"
    assert fake.requests[1].body["messages"][-1] == {"role": "user", "content": STEER}
    assert events.types()[-1] == "task.completed"
    late = await alice.post(f"/resolve/api/tasks/{task_id}/messages", {"text": "more"})
    assert late.status_code == 409 and late.json()["error"]["code"] == "run_ended"
