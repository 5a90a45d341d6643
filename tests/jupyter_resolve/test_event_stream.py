"""How a run's events reach its clients: sinks take each batch inside the append, watchers are
woken once per batch, and an SSE client too slow for the run catches up from the event list."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from jupyter_resolve.contracts.bodies import Event
from jupyter_resolve.runs.stream import EventStream
from tests.conftest import Server


def test_a_sink_takes_each_batch_inside_the_append_in_order() -> None:
    stream = EventStream(None)
    stream.append("run.started", {"n": 0})  # before the sink: the caller's to send
    seen: list[list[int]] = []
    unsubscribe = stream.subscribe(lambda events: seen.append([e.seq for e in events]) or True)
    stream.append_many([("text.delta", {"n": 1}), ("text.delta", {"n": 2})])
    assert seen == [[2, 3]]  # already there when append_many returns
    stream.append("text.delta", {"n": 3})
    assert seen == [[2, 3], [4]]
    unsubscribe()
    stream.append("text.delta", {"n": 4})
    assert seen == [[2, 3], [4]]


def test_a_sink_that_declines_or_fails_gets_no_more_and_stops_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    stream = EventStream(None)
    declined: list[int] = []
    steady: list[int] = []

    def decline(events: list[Event]) -> bool:
        declined.extend(e.seq for e in events)
        return False

    def broken(events: list[Event]) -> bool:
        raise RuntimeError("a client's sink broke")

    stream.subscribe(decline)
    stream.subscribe(broken)
    stream.subscribe(lambda events: steady.extend(e.seq for e in events) or True)
    for n in range(3):
        stream.append("text.delta", {"n": n})
    assert declined == [1]
    assert steady == [1, 2, 3]
    assert [e.seq for e in stream.events] == [1, 2, 3]
    assert "an event sink failed" in caplog.text


async def test_wait_is_woken_by_an_append_and_times_out_when_idle() -> None:
    stream = EventStream(None)
    assert await stream.wait(0.01) is False
    waiting = asyncio.ensure_future(stream.wait(5))
    await asyncio.sleep(0)
    stream.append("text.delta", {"n": 1})
    assert await waiting is True
    assert not stream._waiters  # nothing left behind


async def test_watch_yields_stored_then_live_events_then_stops_at_the_final_one() -> None:
    stream = EventStream(None)
    stream.append("run.started", {})
    got: list[str | None] = []

    async def watch() -> None:
        async for event in stream.watch(0, idle=0.01):
            got.append(None if event is None else event.type)
            if event is None:
                stream.append_many([("text.delta", {}), ("run.completed", {})])

    await asyncio.wait_for(watch(), 5)
    assert got == ["run.started", None, "text.delta", "run.completed"]


@pytest.fixture
def resolve_config(tmp_path: Path) -> dict[str, Any]:
    script = tmp_path / "long.jsonl"
    turn = {"content": "".join(f"word{i} " for i in range(400))}
    script.write_text(json.dumps(turn) + "\n")
    return {"provider": "scripted", "script": str(script)}


async def test_a_client_behind_the_run_catches_up_with_every_event(
    server: Server, jp_root_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jupyter_resolve.handlers import live

    caught_up: list[int] = []
    original = live.LiveEvents._catch_up

    async def catch_up(self: live.LiveEvents, keepalive: float | None) -> None:
        caught_up.append(self.position)
        await original(self, keepalive)

    monkeypatch.setattr(live.LiveEvents, "_catch_up", catch_up)
    monkeypatch.setattr(live, "LAG_BYTES", 0)  # any byte not yet on the socket is a lag
    stream = await server.chat("hi")
    assert stream.types()[0] == "run.started" and stream.types()[-1] == "run.completed"
    assert [e.id for e in stream.events] == list(range(1, len(stream.events) + 1))
    assert stream.text() == "".join(f"word{i} " for i in range(400))
    run_id = stream.events[0].data["run_id"]
    log = jp_root_dir / ".resolve" / "runs" / f"{run_id}.jsonl"
    logged = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(r["seq"], r["type"]) for r in logged] == [(e.id, e.event) for e in stream.events]
    assert caught_up and caught_up[0] < len(stream.events)  # the rest came from the list
