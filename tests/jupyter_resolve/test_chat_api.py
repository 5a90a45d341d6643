"""End to end: a real Jupyter server, a real agent-httpd, the scripted model."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from tests.conftest import Server


async def test_chat_streams_a_scripted_answer(server: Server, jp_root_dir: Path) -> None:
    stream = await server.chat("hi")
    assert stream.status == 200
    assert stream.headers["content-type"] == "text/event-stream; charset=utf-8"
    assert stream.headers["cache-control"] == "no-cache"
    assert stream.headers["x-accel-buffering"] == "no"
    assert "gzip" not in stream.headers.get("content-encoding", "")
    types = stream.types()
    assert types[0] == "run.started" and types[-1] == "run.completed"
    assert types.count("run.completed") == 1
    assert "text.delta" in types
    assert "scripted" in stream.text()
    assert [e.id for e in stream.events] == list(range(1, len(stream.events) + 1))
    run_id = stream.events[0].data["run_id"]
    assert all(e.data["run_id"] == run_id for e in stream.events)
    started = stream.events[0].data
    assert started["model"] == "scripted" and started["budget"]["rounds"] == 8
    assert len(started["manifest"]["sha256"]) == 64
    assert stream.events[-1].data["reason"] == "stop"
    # The run log holds exactly what was sent, in order.
    log = jp_root_dir / ".resolve" / "runs" / f"{run_id}.jsonl"
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(r["seq"], r["type"], r["data"]) for r in lines] == [
        (e.id, e.event, e.data) for e in stream.events
    ]


async def test_health_shows_running_runtime(server: Server) -> None:
    response = await server.get("/resolve/api/health")
    assert response.status_code == 200
    health = response.json()
    assert health["ok"] is True
    assert health["runtime"]["state"] == "running"
    assert isinstance(health["runtime"]["pid"], int)
    assert health["runtime"]["version"] == "0.1.0"
    assert health["provider"]["name"] == "scripted"
    assert health["drift"] == []


async def test_script_replays_turns_per_run(server: Server, gateway: Any, tmp_path: Path) -> None:
    from jupyter_resolve.providers import ScriptedProvider

    script = tmp_path / "script.jsonl"
    script.write_text(
        json.dumps(
            {
                "content": "",
                "reasoning": "let me look",
                "tool_calls": [{"name": "python", "arguments": {"code": "1+1"}}],
            }
        )
        + "\n"
        + json.dumps({"content": "Done: two."})
        + "\n"
    )
    gateway.provider = ScriptedProvider(script)
    stream = await server.chat("compute")
    assert stream.types()[-1] == "run.completed"
    requested = stream.of("tool.requested")
    assert requested[0]["name"] == "python"
    assert requested[0]["arguments"] == {"code": "1+1"}
    completed = stream.of("tool.completed")
    assert completed[0]["ok"] is True and completed[0]["output"] == "2"
    assert stream.of("reasoning.delta")
    assert stream.text() == "Done: two."
    assert stream.of("run.completed")[0]["rounds"] == 2


async def test_run_outlives_its_client_and_can_be_reattached(
    server: Server, gateway: Any, tmp_path: Path
) -> None:
    from jupyter_resolve.providers import ScriptedProvider

    script = tmp_path / "script.jsonl"
    turns = [{"content": "", "tool_calls": [{"name": "nope", "arguments": {}}]}] * 3
    turns.append({"content": "finally an answer"})
    script.write_text("\n".join(json.dumps(t) for t in turns) + "\n")
    gateway.provider = ScriptedProvider(script)
    first = await server.chat("go", until=lambda e: e.event == "tool.requested")
    run_id = first.events[0].data["run_id"]
    run = gateway.runs.get(run_id)
    await asyncio.wait_for(run.task, 30)
    assert run.reason == "stop"
    listed = (await server.get("/resolve/api/runs")).json()["runs"]
    assert any(r["run_id"] == run_id and r["status"] == "completed" for r in listed)
    seen = first.events[-1].id
    rest = await server.stream(
        f"/resolve/api/runs/{run_id}/events", method="GET", headers={"Last-Event-ID": str(seen)}
    )
    ids = [e.id for e in first.events] + [e.id for e in rest.events]
    assert ids == list(range(1, len(ids) + 1))
    assert rest.text() == "finally an answer"
    # Replaying from the start gives the same events again.
    again = await server.stream(f"/resolve/api/runs/{run_id}/events?after=0", method="GET")
    assert [e.data for e in again.events] == [e.data for e in first.events + rest.events]
    # A finished run replays byte for byte.
    async with server.client() as client:
        path = f"/resolve/api/runs/{run_id}/events"
        one = (await client.get(path, headers=server.auth)).content
        two = (await client.get(path, headers=server.auth)).content
    assert one == two and one.count(b"\nevent: ") == len(ids)


async def test_budget_stop_carries_the_empty_run_summary(
    server: Server, gateway: Any, tmp_path: Path
) -> None:
    from jupyter_resolve.providers import ScriptedProvider

    script = tmp_path / "loop.jsonl"
    turn = {"content": "", "tool_calls": [{"name": "read_file", "arguments": {"path": "x"}}]}
    script.write_text("\n".join(json.dumps(turn) for _ in range(10)) + "\n")
    gateway.provider = ScriptedProvider(script)
    gateway.config.max_rounds = 3
    stream = await server.chat("loop")
    done = stream.of("run.completed")[0]
    assert done["reason"] == "budget" and done["rounds"] == 3
    assert done["summary"]["tools"] == "read_file ×3"
    assert "does not exist" in done["summary"]["last_error"]


async def test_unknown_tool_is_an_error_result_never_executed(
    server: Server, gateway: Any, tmp_path: Path
) -> None:
    from jupyter_resolve.providers import ScriptedProvider

    script = tmp_path / "script.jsonl"
    turns = [
        {"content": "", "tool_calls": [{"name": "rm_rf", "arguments": {"path": "/"}}]},
        {"content": "ok"},
    ]
    script.write_text("\n".join(json.dumps(t) for t in turns) + "\n")
    gateway.provider = ScriptedProvider(script)
    stream = await server.chat("x")
    completed = stream.of("tool.completed")[0]
    assert completed["ok"] is False
    assert "unknown tool 'rm_rf'" in completed["output"]
    assert "python" in completed["output"]  # it names what the run may use
    assert not stream.of("tool.started")  # nothing was executed


async def test_runs_list_keeps_the_prompt_and_times_across_a_restart(
    server: Server, gateway: Any, jp_root_dir: Path
) -> None:
    import logging

    from jupyter_resolve.contracts.run_rows import RunQuery
    from jupyter_resolve.gateway import Gateway

    stream = await server.chat("what is 6*7?")
    started = stream.events[0].data
    assert started["prompt"] == "what is 6*7?"
    run_id = started["run_id"]
    listed = {r["run_id"]: r for r in (await server.get("/resolve/api/runs")).json()["runs"]}
    live = listed[run_id]
    assert live["prompt"] == "what is 6*7?"
    assert live["ended_at"] is not None and live["ended_at"] >= live["started_at"]
    # A server started later reads the run from its log: the prompt, and the times its log
    # lines carry (moved an hour back here, so "now" cannot pass for them).
    log = jp_root_dir / ".resolve" / "runs" / f"{run_id}.jsonl"
    records = [json.loads(line) for line in log.read_text().splitlines()]
    for record in records:
        record["ts"] -= 3600
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    later = Gateway(gateway.config, root_dir=jp_root_dir, log=logging.getLogger("test"))
    assert later.runs.indexed(timeout=30)  # the changed log is indexed again, in the background
    logged = {r.run_id: r for r in later.runs.page(RunQuery()).runs}[run_id]
    assert logged.prompt == "what is 6*7?"
    assert logged.started_at == records[0]["ts"]
    assert logged.ended_at == records[-1]["ts"]
