"""A running call's output streams live as ``tool.output`` (issue 30 point 2, DESIGN 3.6): real
server, real agent-httpd, real scratch kernel, the model scripted. Order is asserted by SEQ;
that the output is live is shown by code that waits for what only its live output lets the test
do (write a file), never by timing."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from jupyter_resolve.providers import ScriptedProvider
from jupyter_resolve.runs.tool_output import (
    FLUSH_CHARS,
    MAX_DISPLAY_CHARS,
    MAX_EVENTS,
    MAX_TEXT,
    LiveOutput,
)
from jupyter_resolve.scratch.iopub import KernelOutput
from tests.conftest import SSE, Server, Stream
from tests.scripting import call, script

# Prints that it waits, then waits (at most 20 s) for a file only the test writes, and only on
# seeing that line among the run's events: "go seen" means the line reached the client while
# the call was still running.
WAITS_FOR_THE_CLIENT = """
import os, sys, time
print("waiting for go", flush=True)
for _ in range(400):
    if os.path.exists("go.txt"):
        break
    time.sleep(0.05)
print("go seen" if os.path.exists("go.txt") else "gave up")
print("to stderr", file=sys.stderr)
"""
SHELL_WAITS_FOR_THE_CLIENT = (
    "echo waiting for go; for i in $(seq 400); do [ -e go.txt ] && break; sleep 0.05; done; "
    "if [ -e go.txt ]; then echo go seen; else echo gave up; fi"
)
PRINTS_FIVE_LINES = """
import time
for i in range(5):
    print(f"line {i}", flush=True)
    time.sleep(0.3)
"""


def outputs(events: list[Any]) -> list[tuple[int, dict[str, Any]]]:
    return [(e.id, e.data) for e in events if e.event == "tool.output"]


def text_of(events: list[Any], stream: str) -> str:
    return "".join(d.get("text", "") for _, d in outputs(events) if d["stream"] == stream)


def seq_of(stream: Stream, kind: str) -> int:
    return next(e.id for e in stream.events if e.event == kind and e.id is not None)


async def test_printed_lines_reach_the_client_while_the_call_runs(
    server: Server, gateway: Any, tmp_path: Path, jp_root_dir: Path
) -> None:
    gateway.config.approval_policy = {"exec": "auto"}
    session = "s-live"
    work = jp_root_dir / ".resolve" / "sessions" / session / "work"
    script(gateway, tmp_path, call("python", code=WAITS_FOR_THE_CLIENT), {"content": "done"})

    def on_event(event: SSE) -> bool:
        if event.event == "tool.output" and "waiting for go" in event.data.get("text", ""):
            (work / "go.txt").touch()
        return False

    body = {"messages": [{"role": "user", "content": "live"}], "session_id": session}
    stream = await server.stream("/resolve/api/chat", body, until=on_event)
    completed = stream.of("tool.completed")[0]
    assert completed["ok"] is True, completed
    assert "go seen" in completed["output"], completed["output"]
    # Every tool.output of the call comes after its tool.started and before its tool.completed.
    live = outputs(stream.events)
    assert live, stream.types()
    call_id = completed["call_id"]
    assert all(d["call_id"] == call_id and d["run_id"] for _, d in live)
    assert all(
        seq_of(stream, "tool.started") < s < seq_of(stream, "tool.completed") for s, _ in live
    )
    assert text_of(stream.events, "stdout") == "waiting for go\ngo seen\n"
    assert text_of(stream.events, "stderr") == "to stderr\n"
    assert {d["stream"] for _, d in live} == {"stdout", "stderr"}


async def test_a_shell_command_streams_its_output_too(
    server: Server, gateway: Any, tmp_path: Path, jp_root_dir: Path
) -> None:
    gateway.config.approval_policy = {"exec": "auto"}
    session = "s-live-shell"
    work = jp_root_dir / ".resolve" / "sessions" / session / "work"
    script(gateway, tmp_path, call("shell", command=SHELL_WAITS_FOR_THE_CLIENT), {"content": "ok"})

    def on_event(event: SSE) -> bool:
        if event.event == "tool.output" and "waiting for go" in event.data.get("text", ""):
            (work / "go.txt").touch()
        return False

    body = {"messages": [{"role": "user", "content": "live"}], "session_id": session}
    stream = await server.stream("/resolve/api/chat", body, until=on_event)
    completed = stream.of("tool.completed")[0]
    assert completed["output"].startswith("waiting for go\ngo seen\n[exit code 0]"), completed
    assert text_of(stream.events, "stdout") == "waiting for go\ngo seen\n"
    live = outputs(stream.events)
    assert all(
        seq_of(stream, "tool.started") < s < seq_of(stream, "tool.completed") for s, _ in live
    )


async def test_live_output_is_logged_and_replayed(
    server: Server, gateway: Any, tmp_path: Path, jp_root_dir: Path
) -> None:
    gateway.config.approval_policy = {"exec": "auto"}
    script(gateway, tmp_path, call("python", code=PRINTS_FIVE_LINES), {"content": "done"})
    stream = await server.chat("five lines", session_id="s-replay")
    expected = "".join(f"line {i}\n" for i in range(5))
    assert text_of(stream.events, "stdout") == expected
    assert stream.of("tool.completed")[0]["output"] == expected.rstrip("\n")
    live = outputs(stream.events)
    assert max(s for s, _ in live) < seq_of(stream, "tool.completed")
    run_id = stream.of("run.started")[0]["run_id"]

    # The run log has them, in order, before tool.completed.
    log = jp_root_dir / ".resolve" / "runs" / f"{run_id}.jsonl"
    logged = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(r["seq"], r["data"]) for r in logged if r["type"] == "tool.output"] == live
    # A reattach replays them, and one from the first of them sends the rest.
    replay = await server.stream(f"/resolve/api/runs/{run_id}/events", method="GET")
    assert outputs(replay.events) == live
    first = live[0][0]
    rest = await server.stream(
        f"/resolve/api/runs/{run_id}/events", method="GET", headers={"Last-Event-ID": str(first)}
    )
    assert outputs(rest.events) == live[1:]
    assert rest.events[0].id == first + 1


async def test_the_offline_demo_shows_progress_live(server: Server, gateway: Any) -> None:
    gateway.config.approval_policy = {"exec": "auto"}
    gateway.provider = ScriptedProvider(None)
    stream = await server.chat("print progress", session_id="s-demo")
    expected = "".join(f"step {i} of 5\n" for i in range(1, 6)) + "done\n"
    assert text_of(stream.events, "stdout") == expected


async def test_a_flood_of_output_is_bounded_and_the_result_keeps_it(
    server: Server, gateway: Any, tmp_path: Path
) -> None:
    gateway.config.approval_policy = {"exec": "auto"}
    code = "for i in range(2000):\n    print('x' * 99)\n"  # 200,000 characters
    script(gateway, tmp_path, call("python", code=code), {"content": "done"})
    stream = await server.chat("flood", session_id="s-flood")
    live = outputs(stream.events)
    assert 1 < len(live) <= MAX_EVENTS
    *shown, marker = [d["text"] for _, d in live]
    assert "live output stops here" in marker and "tool.completed" in marker
    assert "".join(shown) == ("x" * 99 + "\n") * (MAX_TEXT // 100)
    assert max(s for s, _ in live) < seq_of(stream, "tool.completed")
    completed = stream.of("tool.completed")[0]
    assert completed["ok"] is True and completed["truncated"] is True
    assert completed["output"].startswith("x" * 99 + "\n")
    assert "[output truncated" in completed["output"]


async def test_displays_stream_with_their_mime_bundle_and_display_id(
    server: Server, gateway: Any, tmp_path: Path
) -> None:
    gateway.config.approval_policy = {"exec": "auto"}
    code = (
        "from IPython.display import HTML, display\n"
        "display(HTML('<b>first</b>'))\n"
        "handle = display('step 1', display_id=True)\n"
        "handle.update('step 2')\n"
    )
    script(gateway, tmp_path, call("python", code=code), {"content": "done"})
    stream = await server.chat("displays", session_id="s-display")
    live = [d for _, d in outputs(stream.events)]
    assert [d["stream"] for d in live] == ["display", "display", "display"]
    assert live[0]["mime"]["text/html"] == "<b>first</b>"
    assert "display_id" not in live[0]
    assert [d["mime"]["text/plain"] for d in live[1:]] == ["'step 1'", "'step 2'"]
    assert live[1]["display_id"] == live[2]["display_id"]


async def test_a_cancel_while_output_streams_ends_the_run_once(
    server: Server, gateway: Any, tmp_path: Path, jp_root_dir: Path
) -> None:
    gateway.config.approval_policy = {"exec": "auto"}
    code = "import time\nfor i in range(600):\n    print('tick', i, flush=True); time.sleep(0.05)"
    script(gateway, tmp_path, call("python", code=code), {"content": "went on after the cancel"})
    printing = asyncio.Event()
    run_ids: list[str] = []

    def on_event(event: SSE) -> bool:
        run_ids.append(event.data["run_id"])
        if event.event == "tool.output":
            printing.set()
        return False

    async def cancel_when_printing() -> str:
        await asyncio.wait_for(printing.wait(), 30)
        run_id = run_ids[0]
        response = await server.post(f"/resolve/api/runs/{run_id}/cancel", {})
        assert response.status_code == 200
        return run_id

    canceller = asyncio.create_task(cancel_when_printing())
    body = {"messages": [{"role": "user", "content": "tick"}], "session_id": "s-tick"}
    stream = await asyncio.wait_for(server.stream("/resolve/api/chat", body, until=on_event), 40)
    run_id = await canceller
    types = stream.types()
    assert types.count("run.completed") == 1 and types[-1] == "run.completed", types
    assert stream.of("run.completed")[0]["reason"] == "cancelled"
    assert "tool.output" in types and "tool.completed" not in types
    assert "went on" not in stream.text()
    await asyncio.sleep(0.5)  # a late event would be in the run by now
    run = gateway.runs.get(run_id)
    assert [e.type for e in run.events] == types
    log = jp_root_dir / ".resolve" / "runs" / f"{run_id}.jsonl"
    logged = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["type"] for r in logged] == types
    assert [r["seq"] for r in logged] == list(range(1, len(types) + 1))


# The coalescing and the bounds alone (runs/tool_output.py), the events taken as the run would.


def live_output() -> tuple[LiveOutput, list[dict[str, Any]]]:
    sent: list[dict[str, Any]] = []

    def emit(batch: list[tuple[Any, dict[str, Any]]]) -> None:
        assert all(kind == "tool.output" for kind, _ in batch)
        sent.extend(data for _, data in batch)

    return LiveOutput(emit, "call_1"), sent


async def test_a_burst_is_one_event_per_stream_run_and_waits_for_the_flush() -> None:
    live, sent = live_output()
    for i in range(500):
        live.add(KernelOutput("stdout", f"{i}\n"))
    live.add(KernelOutput("stderr", "oops\n"))
    live.add(KernelOutput("stdout", "more\n"))
    assert sent == []  # held for at most FLUSH_SECONDS
    live.close()
    assert [(d["stream"], len(d["text"])) for d in sent] == [
        ("stdout", sum(len(f"{i}\n") for i in range(500))),
        ("stderr", 5),
        ("stdout", 5),
    ]
    live.add(KernelOutput("stdout", "after the end\n"))
    live.flush()
    assert len(sent) == 3


async def test_much_text_at_once_is_sent_at_once() -> None:
    live, sent = live_output()
    live.add(KernelOutput("stdout", "x" * FLUSH_CHARS))
    assert [d["text"] for d in sent] == ["x" * FLUSH_CHARS]
    live.close()


async def test_alternating_streams_stop_at_the_event_bound_with_one_marker() -> None:
    live, sent = live_output()
    for i in range(300):
        live.add(KernelOutput("stderr" if i % 2 else "stdout", "."))
    live.close()
    assert len(sent) == MAX_EVENTS
    assert "live output stops here" in sent[-1]["text"]
    assert [d["text"] for d in sent[:-1]] == ["."] * (MAX_EVENTS - 1)


async def test_displays_keep_the_shown_types_and_a_bounded_payload() -> None:
    live, sent = live_output()
    live.add(KernelOutput("display", data={"image/png": "A" * 1000, "text/latex": "$x$"}))
    live.add(KernelOutput("display", data={"application/x-unknown": "?"}))  # nothing to show
    live.add(KernelOutput("display", data={"image/png": "B" * MAX_DISPLAY_CHARS}))
    live.close()
    assert sent[0] == {"call_id": "call_1", "stream": "display", "mime": {"image/png": "A" * 1000}}
    assert "mime" not in sent[1] and "not shown live" in sent[1]["text"]
    assert len(sent) == 2
