"""Souls, tasks, approvals, budgets, reattach and restart (DESIGN 3.3, 3.5, 3.6, 4)."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

from jupyter_resolve.contracts.errors import SoulError
from jupyter_resolve.contracts.run_rows import RunQuery
from jupyter_resolve.souls import load_souls, parse_soul
from tests.conftest import SSE, Server
from tests.scripting import call, script


def test_builtin_souls_parse_and_bad_files_are_named(tmp_path: Path) -> None:
    souls = load_souls([])
    assert {
        "planner",
        "specialist",
        "evaluator",
        "tool-agent",
        "data-analysis",
        "literature-notes",
        "code-review",
        "write-up",
    } <= set(souls)
    assert "python" not in souls["planner"].tool_names(["python", "read_file"])
    bad = tmp_path / "x.md"
    for text, words in [
        ("no front matter", "'---'"),
        ("---\nname: x\n", "closing"),
        ("---\nname: x\nrole: r\n---\n", "description"),
    ]:
        bad.write_text(text)
        try:
            parse_soul(text, str(bad))
        except SoulError as exc:
            assert words in str(exc) and str(bad) in str(exc)
        else:
            raise AssertionError(text)


async def test_souls_endpoint_and_user_souls(server: Server, jp_root_dir: Path) -> None:
    souls = {s["name"]: s for s in (await server.get("/resolve/api/souls")).json()["souls"]}
    assert souls["planner"]["tools"] == ["read_file", "list_dir", "search_files", "notebook_read"]
    assert "python" in souls["specialist"]["tools"]


async def test_a_soul_is_held_to_its_tools(server: Server, gateway: Any, tmp_path: Path) -> None:
    script(
        gateway,
        tmp_path,
        call("python", code="open('planted.txt','w').write('x')"),
        {"content": "planned"},
    )
    stream = await server.chat("plan", soul="planner", session_id="s-plan")
    completed = stream.of("tool.completed")[0]
    assert completed["ok"] is False and "unknown tool 'python'" in completed["output"]
    assert not stream.of("tool.started")
    assert "s-plan" not in gateway.kernels.kernels  # nothing executed: no kernel was needed
    assert stream.events[0].data["soul"] == "planner"
    bad = await server.post(
        "/resolve/api/chat", {"messages": [{"role": "user", "content": "x"}], "soul": "nobody"}
    )
    assert bad.status_code == 400 and "nobody" in bad.json()["error"]["message"]


def task_script(verdicts: list[str]) -> list[dict[str, Any]]:
    turns: list[dict[str, Any]] = [
        {"soul": "planner", "content": "1. compute x"},
        call("python", soul="specialist", code="x = 6 * 7\nx"),
        {"soul": "specialist", "content": "Found x = 42."},
    ]
    turns += [{"soul": "evaluator", "content": v} for v in verdicts]
    turns.append({"soul": "tool-agent", "content": "Final answer: 42."})
    return turns


async def test_four_role_task_completes_in_one_stream(
    server: Server, gateway: Any, tmp_path: Path
) -> None:
    script(gateway, tmp_path, *task_script(["Looks right.\nVERDICT: accept"]))
    stream = await server.stream("/resolve/api/tasks", {"goal": "what is 6*7?"})
    assert stream.types()[0] == "task.started" and stream.types()[-1] == "task.completed"
    ids = [e.id for e in stream.events]
    assert ids == list(range(1, len(ids) + 1))
    done = stream.events[-1].data
    assert done["reason"] == "stop"
    assert done["roles"] == ["planner", "specialist", "evaluator", "tool-agent"]
    roles = [e.data["role"] for e in stream.events if e.event == "run.started"]
    assert roles == ["planner", "specialist", "evaluator", "tool-agent"]
    tool = next(e.data for e in stream.events if e.event == "tool.completed")
    assert tool["role"] == "specialist" and tool["output"] == "42"
    texts = {e.data["role"]: "" for e in stream.events if e.event == "text.delta"}
    for e in stream.events:
        if e.event == "text.delta":
            texts[e.data["role"]] += e.data["text"]
    assert texts["tool-agent"] == "Final answer: 42."
    # The specialist was given the plan; the evaluator the findings.
    runs = {r.soul: r for r in (gateway.runs.get(i) for i in done["runs"])}
    assert runs["specialist"].events[0].data["soul"] == "specialist"


async def test_a_task_replays_from_its_log_in_a_later_server(
    server: Server, gateway: Any, tmp_path: Path, jp_root_dir: Path
) -> None:
    from jupyter_resolve.gateway import Gateway

    script(gateway, tmp_path, *task_script(["Looks right.\nVERDICT: accept"]))
    stream = await server.stream("/resolve/api/tasks", {"goal": "what is 6*7?"})
    task_id = stream.events[0].data["task_id"]
    # the steps are listed as runs of the task, newest first
    steps = [r for r in (await server.get("/resolve/api/runs")).json()["runs"] if r["task_id"]]
    assert {r["task_id"] for r in steps} == {task_id}
    assert [r["soul"] for r in steps] == ["tool-agent", "evaluator", "specialist", "planner"]
    # a server started later replays the task from its log, event for event
    later = Gateway(gateway.config, root_dir=jp_root_dir, log=logging.getLogger("test"))
    replayed = later.tasks.get(task_id)
    assert [(e.seq, e.type, e.data) for e in replayed.events] == [
        (e.id, e.event, e.data) for e in stream.events
    ]
    assert {r.task_id for r in later.runs.page(RunQuery()).runs if r.task_id} == {task_id}
    # a task log cut short (the server died mid-task): the next server closes it
    # "interrupted" when it starts, and it replays to that end
    tasks = jp_root_dir / ".resolve" / "tasks"
    lines = (tasks / f"{task_id}.jsonl").read_text().splitlines()
    (tasks / "task-cut.jsonl").write_text("\n".join(lines[:5]) + "\n")
    restarted = Gateway(gateway.config, root_dir=jp_root_dir, log=logging.getLogger("test"))
    last = json.loads((tasks / "task-cut.jsonl").read_text().splitlines()[-1])
    assert (last["seq"], last["type"], last["data"]["task_id"]) == (6, "task.completed", "task-cut")
    assert last["data"]["reason"] == "interrupted"
    cut = restarted.tasks.get("task-cut")
    assert cut.closed and cut.events[-1].data["reason"] == "interrupted"
    assert len(cut.events) == 6
    missing = await server.get("/resolve/api/tasks/task-none/events")
    assert missing.status_code == 404


async def test_rejection_sends_work_back_to_the_specialist_once(
    server: Server, gateway: Any, tmp_path: Path
) -> None:
    script(gateway, tmp_path, *task_script(["Unsupported.\nVERDICT: reject"]))
    stream = await server.stream("/resolve/api/tasks", {"goal": "what is 6*7?"})
    done = stream.events[-1].data
    assert done["rejected"] is True
    assert done["roles"] == [
        "planner",
        "specialist",
        "evaluator",
        "specialist",
        "evaluator",
        "tool-agent",
    ]


async def approve_when_waiting(server: Server, gateway: Any, decision: str) -> None:
    for _ in range(200):
        for run in gateway.runs.runs.values():
            for call_id in list(run.approvals):
                response = await server.post(
                    f"/resolve/api/runs/{run.run_id}/approvals/{call_id}", {"decision": decision}
                )
                assert response.status_code == 200
                return
        await asyncio.sleep(0.05)
    raise AssertionError("no call waited for approval")


async def test_ask_approved_runs_denied_leaves_no_trace(
    server: Server, gateway: Any, tmp_path: Path, jp_root_dir: Path
) -> None:
    gateway.config.approval_policy = {"shell": "ask"}  # the default is auto
    script(gateway, tmp_path, call("shell", command="echo approved > ok.txt"), {"content": "ok"})
    approver = asyncio.create_task(approve_when_waiting(server, gateway, "approve"))
    stream = await server.chat("a", session_id="s-ask")
    await approver
    states = [a["state"] for a in stream.of("tool.approval")]
    assert states == ["waiting", "approved"]
    assert stream.of("tool.approval")[0]["arguments"] == {"command": "echo approved > ok.txt"}
    assert stream.of("tool.completed")[0]["ok"] is True
    work = jp_root_dir / ".resolve" / "sessions" / "s-ask" / "work"
    assert (work / "ok.txt").read_text().strip() == "approved"

    script(gateway, tmp_path, call("shell", command="touch denied.txt"), {"content": "ok"})
    denier = asyncio.create_task(approve_when_waiting(server, gateway, "deny"))
    stream = await server.chat("b", session_id="s-ask")
    await denier
    assert [a["state"] for a in stream.of("tool.approval")] == ["waiting", "denied"]
    completed = stream.of("tool.completed")[0]
    assert completed["ok"] is False and "a person denied" in completed["output"]
    assert not stream.of("tool.started")
    assert not (work / "denied.txt").exists()


async def cancel_when_waiting(server: Server, gateway: Any) -> None:
    for _ in range(200):
        for run in gateway.runs.runs.values():
            if run.approvals:
                response = await server.post(f"/resolve/api/runs/{run.run_id}/cancel")
                assert response.status_code == 200
                return
        await asyncio.sleep(0.05)
    raise AssertionError("no call waited for approval")


async def test_cancel_while_a_call_waits_for_approval_cancels_the_run(
    server: Server, gateway: Any, tmp_path: Path, jp_root_dir: Path
) -> None:
    gateway.config.approval_policy = {"shell": "ask"}
    script(
        gateway,
        tmp_path,
        call("shell", command="touch ran.txt"),
        {"content": "went on after the cancel"},
    )
    canceller = asyncio.create_task(cancel_when_waiting(server, gateway))
    stream = await server.chat("c", session_id="s-cancel-wait")
    await canceller
    assert stream.of("run.completed")[0]["reason"] == "cancelled"
    # The release is not a person's decision: only the wait is on record, and nothing ran.
    assert [a["state"] for a in stream.of("tool.approval")] == ["waiting"]
    assert not stream.of("tool.started") and "went on" not in stream.text()
    work = jp_root_dir / ".resolve" / "sessions" / "s-cancel-wait" / "work"
    assert not (work / "ran.txt").exists()


async def test_approval_timeout_is_a_denial_and_policy_can_deny(
    server: Server, gateway: Any, tmp_path: Path
) -> None:
    gateway.config.approval_timeout = 0.3
    gateway.config.approval_policy = {"shell": "ask"}  # the default is auto
    script(gateway, tmp_path, call("shell", command="true"), {"content": "ok"})
    stream = await server.chat("t", session_id="s-timeout")
    final = stream.of("tool.approval")[-1]
    assert final["state"] == "denied" and final["by"] == "timeout"
    gateway.config.approval_policy = {"exec": "deny"}
    script(gateway, tmp_path, call("python", code="1"), {"content": "ok"})
    stream = await server.chat("p", session_id="s-timeout")
    assert stream.of("tool.approval")[0]["by"] == "policy"
    assert "policy denies" in stream.of("tool.completed")[0]["output"]
    bad = await server.post("/resolve/api/runs/run-x/approvals/c1", {"decision": "maybe"})
    assert bad.status_code == 400


async def test_tool_call_budget_stops_the_run_with_a_summary(
    server: Server, gateway: Any, tmp_path: Path
) -> None:
    gateway.config.max_tool_calls = 2
    script(gateway, tmp_path, *[call("list_dir") for _ in range(6)])
    stream = await server.chat("loop", session_id="s-budget")
    done = stream.of("run.completed")[0]
    assert done["reason"] == "budget"
    assert "tool-call budget" in done["summary"]["last_error"]
    assert done["summary"]["tools"].startswith("list_dir ×")


async def test_reattach_mid_run_gets_exactly_the_missing_events(
    server: Server, gateway: Any, tmp_path: Path
) -> None:
    script(
        gateway,
        tmp_path,
        call("python", code="import time; time.sleep(1.5)"),
        {"content": "slept well"},
    )

    def started_tool(e: SSE) -> bool:
        return e.event == "tool.started"

    first = await server.chat("sleep", session_id="s-re", until=started_tool)
    run_id = first.events[0].data["run_id"]
    last = first.events[-1].id
    watchers = await asyncio.gather(
        server.stream(
            f"/resolve/api/runs/{run_id}/events", method="GET", headers={"Last-Event-ID": str(last)}
        ),
        server.stream(f"/resolve/api/runs/{run_id}/events", method="GET"),
    )
    rest, whole = watchers
    assert rest.events[0].id == (last or 0) + 1
    combined = [(e.id, e.event, e.data) for e in first.events + rest.events]
    assert combined == [(e.id, e.event, e.data) for e in whole.events]
    assert whole.text() == "slept well"


async def test_restart_marks_live_runs_interrupted(gateway: Any, jp_root_dir: Path) -> None:
    from jupyter_resolve.gateway import Gateway

    runs_dir = jp_root_dir / ".resolve" / "runs"
    runs_dir.mkdir(parents=True, exist_ok=True)
    live = {"seq": 1, "type": "run.started", "data": {"run_id": "run-live", "session_id": "s"}}
    (runs_dir / "run-live.jsonl").write_text(json.dumps(live) + "\n")
    Gateway(gateway.config, root_dir=jp_root_dir, log=logging.getLogger("test"))
    lines = [json.loads(x) for x in (runs_dir / "run-live.jsonl").read_text().splitlines()]
    assert lines[-1]["type"] == "run.completed"
    assert lines[-1]["data"]["reason"] == "interrupted"
    assert gateway.runs.get("run-live").reason == "interrupted"


async def test_specialist_can_delegate_once_deep(
    server: Server, gateway: Any, tmp_path: Path
) -> None:
    script(
        gateway,
        tmp_path,
        {
            "soul": "specialist",
            "content": "",
            "tool_calls": [
                {
                    "name": "subagents.delegate",
                    "arguments": {"soul": "data-analysis", "prompt": "count the rows"},
                }
            ],
        },
        {"soul": "specialist", "content": "done"},
        {"soul": "data-analysis", "content": "the data has 3 rows"},
    )
    stream = await server.chat("delegate", soul="specialist", session_id="s-del")
    result = stream.of("tool.completed")[0]
    assert result["name"] == "subagents.delegate" and result["ok"] is True
    assert "the data has 3 rows" in result["output"]
    listed = gateway.runs.page(RunQuery()).runs
    child = gateway.runs.get(next(r.run_id for r in listed if r.soul == "data-analysis"))
    assert child.parent == stream.events[0].data["run_id"]
    assert "subagents.delegate" not in child.tool_names  # depth 1
