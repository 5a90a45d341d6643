"""Cancel stops everything (issue 16 item 6, DESIGN 3.6): a cancel during a tool call interrupts
the tool before ``run.completed``, nothing of the run follows ``run.completed`` in the stream or
in the log, the runs list says ``cancelled``, and the session's kernel keeps its variables."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from jupyter_resolve.contracts.run_rows import RunQuery
from tests.conftest import Server
from tests.scripting import call, script

# Written before the sleep (the test cancels once it exists) and after it (it must not appear).
SLEEPING = "sleeping.txt"
AFTER = "after-the-sleep.txt"


@pytest.fixture
def resolve_config(request: pytest.FixtureRequest) -> dict[str, Any]:
    """``c.Resolve.sandbox``: the test's parameter (bwrap or none), else the default."""
    from jupyter_resolve.scratch.sandbox import bwrap_available

    sandbox = getattr(request, "param", "auto")
    if sandbox == "bwrap" and not bwrap_available():
        pytest.skip("bubblewrap cannot create its namespaces here")
    return {"sandbox": sandbox}


SANDBOXES = pytest.mark.parametrize(
    "resolve_config", ["bwrap", "none"], indirect=True, ids=["sandboxed", "unsandboxed"]
)


def tool_code(name: str) -> dict[str, Any]:
    """A call of ``name`` that sets something, says it sleeps, sleeps 30 s, then writes AFTER."""
    if name == "python":
        code = (
            "before_the_sleep = 7319\n"
            f"open({SLEEPING!r}, 'w').close()\n"
            "import time; time.sleep(30)\n"
            f"open({AFTER!r}, 'w').close()\n"
        )
        return call("python", code=code)
    return call("shell", command=f"touch {SLEEPING}; sleep 30; touch {AFTER}")


async def cancel_when_sleeping(server: Server, gateway: Any, work: Path, session: str) -> str:
    for _ in range(600):
        if (work / SLEEPING).exists():
            run_id = next(r.run_id for r in gateway.runs.runs.values() if r.session_id == session)
            response = await server.post(f"/resolve/api/runs/{run_id}/cancel", {})
            assert response.status_code == 200
            return run_id
        await asyncio.sleep(0.05)
    raise AssertionError("the tool never started sleeping")


@SANDBOXES
@pytest.mark.parametrize("tool", ["python", "shell"])
async def test_cancel_during_a_tool_interrupts_it_and_nothing_follows_the_end(
    server: Server, gateway: Any, tmp_path: Path, jp_root_dir: Path, tool: str
) -> None:
    gateway.config.approval_policy = {"exec": "auto"}
    session = f"s-cancel-{tool}-{gateway.kernels.sandbox or 'none'}"
    work = jp_root_dir / ".resolve" / "sessions" / session / "work"
    turns = [tool_code(tool), {"content": "went on after the cancel"}]
    if tool == "shell":  # the variable is set by an earlier call of the run
        turns.insert(0, call("python", code="before_the_sleep = 7319"))
    script(gateway, tmp_path, *turns)
    canceller = asyncio.create_task(cancel_when_sleeping(server, gateway, work, session))
    stream = await asyncio.wait_for(server.chat("sleep", session_id=session), 25)
    run_id = await canceller

    # The stream: the tool was stopped before the one run.completed, the last event; the call
    # gets no tool.completed (clients fold the open call into "cancelled").
    types = stream.types()
    assert types.count("run.completed") == 1 and types[-1] == "run.completed", types
    assert stream.of("run.completed")[0]["reason"] == "cancelled"
    assert "run.error" not in types, stream.of("run.error")
    last_start = len(types) - 1 - types[::-1].index("tool.started")
    assert types[last_start:] == ["tool.started", "run.completed"], types
    assert "went on" not in stream.text()
    # ... and the tool was interrupted: the kernel is idle and the sleep never got to its end.
    kernel = gateway.kernels.kernels[session]
    assert not kernel._lock.locked()
    await asyncio.sleep(1.0)  # a late event or a late file would show up by now
    assert not (work / AFTER).exists()

    # The run as the server keeps it: the same events, nothing after run.completed, in memory
    # and in the log file.
    run = gateway.runs.get(run_id)
    assert [e.type for e in run.events] == types
    log = jp_root_dir / ".resolve" / "runs" / f"{run_id}.jsonl"
    logged = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["type"] for r in logged] == types
    assert [r["seq"] for r in logged] == list(range(1, len(types) + 1))

    # The runs list says so.
    listed = (await server.get("/resolve/api/runs", params={"session_id": session})).json()
    row = next(r for r in listed["runs"] if r["run_id"] == run_id)
    assert (row["status"], row["reason"]) == ("completed", "cancelled")

    # The kernel kept its state: the next chat of the session sees the variable.
    script(gateway, tmp_path, call("python", code="before_the_sleep + 1"), {"content": "ok"})
    stream = await server.chat("again", session_id=session)
    assert stream.of("run.completed")[0]["reason"] == "stop"
    assert stream.of("tool.completed")[-1]["output"] == "7320"
    assert not (work / AFTER).exists()


async def test_cancel_during_a_web_fetch_stops_it_first(
    server: Server, gateway: Any, tmp_path: Path, jp_root_dir: Path
) -> None:
    """A fetch from a server that never answers is cancelled before run.completed."""
    gateway.config.approval_policy = {"web_fetch": "auto"}
    gateway.config.allow_private_fetch = True
    asked = asyncio.Event()
    held: list[asyncio.StreamWriter] = []

    async def never_answers(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)
        await reader.readuntil(b"\r\n\r\n")
        asked.set()

    silent = await asyncio.start_server(never_answers, "127.0.0.1", 0)
    port = silent.sockets[0].getsockname()[1]
    script(
        gateway,
        tmp_path,
        call("web_fetch", url=f"http://127.0.0.1:{port}/slow"),
        {"content": "went on after the cancel"},
    )

    async def cancel_when_asked() -> None:
        await asyncio.wait_for(asked.wait(), 15)
        run_id = next(r.run_id for r in gateway.runs.runs.values() if r.session_id == "s-fetch")
        assert (await server.post(f"/resolve/api/runs/{run_id}/cancel", {})).status_code == 200

    try:
        canceller = asyncio.create_task(cancel_when_asked())
        stream = await asyncio.wait_for(server.chat("fetch", session_id="s-fetch"), 15)
        await canceller
    finally:
        for writer in held:
            writer.close()
        silent.close()
    types = stream.types()
    assert types[-2:] == ["tool.started", "run.completed"], types
    assert stream.of("run.completed")[0]["reason"] == "cancelled"
    log = jp_root_dir / ".resolve" / "runs" / f"{stream.events[0].data['run_id']}.jsonl"
    assert [json.loads(line)["type"] for line in log.read_text().splitlines()] == types


def test_an_event_after_the_end_is_dropped_not_logged_and_not_an_error(tmp_path: Path) -> None:
    from jupyter_resolve.runs.log import RunLog, read_run_log
    from jupyter_resolve.runs.run import Run

    run = Run(
        run_id="run-late",
        session_id="s",
        soul=None,
        model="m",
        budget=1,
        log=RunLog(tmp_path, "run-late"),
    )
    run.emit("run.started", {"session_id": "s"})
    run.emit("run.completed", {"reason": "cancelled", "rounds": 0})
    late = run.emit("tool.completed", {"call_id": "c", "name": "python", "ok": False})
    assert late is None and run.dropped == 1
    assert [e.type for e in run.events] == ["run.started", "run.completed"]
    assert run.info().status == "completed" and run.info().reason == "cancelled"
    logged = read_run_log(tmp_path / "run-late.jsonl").events
    assert [e.type for e in logged] == ["run.started", "run.completed"]


async def test_cancel_of_a_run_that_delegated_ends_its_child_first(
    server: Server, gateway: Any, tmp_path: Path, jp_root_dir: Path
) -> None:
    """The parent waits in subagents.delegate while its child sleeps in python: a cancel of
    the parent ends the child ``cancelled`` (its sleep interrupted), then the parent."""
    session = "s-cancel-delegated"
    work = jp_root_dir / ".resolve" / "sessions" / session / "work"
    delegation = {
        "name": "subagents.delegate",
        "arguments": {"soul": "data-analysis", "prompt": "z"},
    }
    script(
        gateway,
        tmp_path,
        {"soul": "specialist", "content": "", "tool_calls": [delegation]},
        {"soul": "specialist", "content": "went on after the cancel"},
        {**tool_code("python"), "soul": "data-analysis"},
        {"soul": "data-analysis", "content": "child went on after the cancel"},
    )
    canceller = asyncio.create_task(cancel_when_sleeping(server, gateway, work, session))
    stream = await asyncio.wait_for(
        server.chat("delegate", soul="specialist", session_id=session), 25
    )
    parent_id = await canceller
    assert stream.events[0].data["run_id"] == parent_id
    types = stream.types()
    assert types[-2:] == ["tool.started", "run.completed"], types
    assert stream.of("run.completed")[0]["reason"] == "cancelled"
    listed = gateway.runs.page(RunQuery()).runs  # an ended run has left the registry
    child = gateway.runs.get(next(r.run_id for r in listed if r.parent == parent_id))
    assert child.reason == "cancelled"
    assert [e.type for e in child.events][-2:] == ["tool.started", "run.completed"]
    assert child.ended_at is not None and stream.events[-1].data["run_id"] == parent_id
    await asyncio.sleep(1.0)
    assert not (work / AFTER).exists()
