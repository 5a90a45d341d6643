"""Audit events over a real ``jupyter server`` (issue 37.4): a ``logging.FileHandler`` set on
``c.EventLogger.handlers`` (jupyter_events) in the server's config receives this project's
events with their schema ids — a run started and ended, a tool call a person denied (naming
them), a promotion — without the prompt's text; with ``c.Resolve.audit_content`` the prompt is
there."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jupyter_resolve.audit import PROMOTION, RUN, TOOL_APPROVAL, server_user
from tests.conftest import parse_sse_block
from tests.launcher import JupyterServer

PROMPT = "AUDIT-CANARY-7f3a: list the files of the quarterly report"
TURNS = [
    {"content": "", "tool_calls": [{"name": "shell", "arguments": {"command": "ls"}}]},
    {"content": "Nothing was listed."},
]


def audited_server(workdir: Path, audit_file: Path, **resolve: Any) -> JupyterServer:
    """A server whose EventLogger writes to ``audit_file`` (a Python config file: a handler
    is an object), on a scripted model that asks to run ``shell``."""
    config_dir = workdir / "config"
    config_dir.mkdir(parents=True)
    (config_dir / "jupyter_server_config.py").write_text(
        f"import logging\nc.EventLogger.handlers = [logging.FileHandler({str(audit_file)!r})]\n"
    )
    script = workdir / "script.jsonl"
    script.write_text("".join(json.dumps(turn) + "\n" for turn in TURNS))
    settings = {"script": str(script), "approval_policy": {"shell": "ask"}, **resolve}
    return JupyterServer(workdir, config={"Resolve": settings}, ready="health")


def chat_denying_each_call(server: JupyterServer) -> list[str]:
    """Chat; deny each call that waits for approval as it comes. The events' types."""
    assert server.http is not None
    body = {"messages": [{"role": "user", "content": PROMPT}]}
    seen: list[str] = []
    url = f"{server.url}/resolve/api/chat"
    with server.http.stream("POST", url, json=body, timeout=60) as response:
        buffer = ""
        for text in response.iter_text():
            buffer += text
            while "\n\n" in buffer:
                block, buffer = buffer.split("\n\n", 1)
                event = parse_sse_block(block)
                if event is None:
                    continue
                seen.append(event.event)
                if event.event == "tool.approval" and event.data["state"] == "waiting":
                    run_id, call_id = event.data["run_id"], event.data["call_id"]
                    decided = server.http.post(
                        f"{server.url}/resolve/api/runs/{run_id}/approvals/{call_id}",
                        json={"decision": "deny"},
                    )
                    assert decided.status_code == 200, decided.text
    return seen


def audit_events(audit_file: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in audit_file.read_text().splitlines() if line.strip()]


def test_audit_events_reach_the_handler_without_prompt_text(tmp_path: Path) -> None:
    audit_file = tmp_path / "audit.log"
    with audited_server(tmp_path / "srv", audit_file) as server:
        seen = chat_denying_each_call(server)
        assert seen[-1] == "run.completed" and "tool.approval" in seen
        assert server.http is not None
        me = server.http.get(f"{server.url}/api/me").json()["identity"]["username"]
        promoted = server.http.post(
            f"{server.url}/resolve/api/artifacts",
            json={"bundle": {"text/plain": "42"}, "label": "answer"},
        )
        assert promoted.status_code == 201, promoted.text
    events = audit_events(audit_file)
    ours = [e for e in events if e["__schema__"].startswith("https://jupyter-resolve.org/")]
    assert [(e["__schema__"], e.get("action")) for e in ours] == [
        (RUN, "started"),
        (TOOL_APPROVAL, None),
        (RUN, "ended"),
        (PROMOTION, None),
    ]
    started, denied, ended, promotion = ours
    assert started["prompt_chars"] == len(PROMPT) and "prompt" not in started
    assert (denied["tool"], denied["state"], denied["by"]) == ("shell", "denied", "person")
    assert denied["user"] == me and denied["run_id"] == started["run_id"]
    assert ended["reason"] == "stop" and ended["rounds"] == 2 and "answer" not in ended
    assert (promotion["by"], promotion["user"], promotion["source"]) == ("person", me, "kernel")
    assert promotion["artifact_id"] == promoted.json()["id"]
    assert "AUDIT-CANARY" not in audit_file.read_text()


def test_with_audit_content_the_prompt_is_recorded(tmp_path: Path) -> None:
    audit_file = tmp_path / "audit.log"
    with audited_server(tmp_path / "srv", audit_file, audit_content=True) as server:
        chat_denying_each_call(server)
    started = next(e for e in audit_events(audit_file) if e["__schema__"] == RUN)
    assert started["prompt"] == PROMPT
    assert "AUDIT-CANARY" in audit_file.read_text()


def test_a_run_is_its_starters_in_the_log_the_listing_and_the_audit(tmp_path: Path) -> None:
    """DESIGN 10.2: ``run.started.owner`` is the Jupyter user who chatted (not the server's
    OS user), and the runs listing and the audit's run events name them."""
    audit_file = tmp_path / "audit.log"
    with audited_server(tmp_path / "srv", audit_file) as server:
        chat_denying_each_call(server)
        assert server.http is not None
        me = server.http.get(f"{server.url}/api/me").json()["identity"]["username"]
        row = server.http.get(f"{server.url}/resolve/api/runs").json()["runs"][0]
        log = server.root / ".resolve" / "runs" / f"{row['run_id']}.jsonl"
        first = json.loads(log.read_text().splitlines()[0])
    assert me and me != server_user()
    assert first["type"] == "run.started" and first["data"]["owner"] == me
    assert row["owner"] == me
    runs = [e for e in audit_events(audit_file) if e["__schema__"] == RUN]
    assert [(e["action"], e["user"]) for e in runs] == [("started", me), ("ended", me)]
