"""Audit records (issue 37.4), pure: what each run event, decision and promotion makes, checked
against the project's schemas as jupyter_events validates them, with and without content."""

from __future__ import annotations

import json
from typing import Any

import pytest
from jupyter_events import EventLogger

from jupyter_resolve.audit import PROMOTION, PROPOSAL, RUN, TOOL_APPROVAL
from jupyter_resolve.audit.logger import SCHEMAS_DIR
from jupyter_resolve.audit.records import SCHEMA_FILES, Record, RunTrail, promotion_record

PROMPT = "please summarise the quarterly figures"
ANSWER = "the figures went up"


@pytest.fixture(scope="module")
def events() -> EventLogger:
    logger = EventLogger()
    for name in SCHEMA_FILES.values():
        logger.register_event_schema(SCHEMAS_DIR / name)
    return logger


RUN_EVENTS: list[tuple[str, dict[str, Any]]] = [
    (
        "run.started",
        {
            "session_id": "s1",
            "prompt": PROMPT,
            "soul": "specialist",
            "model": "scripted",
            "tools": ["python", "read_file"],
        },
    ),
    (
        "tool.approval",
        {"call_id": "c1", "name": "python", "arguments": {"code": "1"}, "state": "waiting"},
    ),
    (
        "tool.approval",
        {
            "call_id": "c1",
            "name": "python",
            "arguments": {"code": "1"},
            "state": "approved",
            "by": "person",
        },
    ),
    ("tool.completed", {"call_id": "c1", "name": "python", "ok": True, "output": "1"}),
    (
        "tool.approval",
        {"call_id": "c2", "name": "shell", "arguments": {}, "state": "denied", "by": "policy"},
    ),
    (
        "notebook.proposal",
        {"call_id": "c3", "proposal_id": "p1", "notebook": "a.ipynb", "cells": [{}, {}]},
    ),
    (
        "notebook.decision",
        {
            "proposal_id": "p1",
            "decision": "rejected",
            "edited": False,
            "ran": False,
            "by": "person",
            "reason": "no thanks",
        },
    ),
    ("usage", {"prompt_tokens": 10, "completion_tokens": 5, "cost": 0.25}),
    ("usage", {"prompt_tokens": 7, "completion_tokens": 3, "cost": 0.5}),
    ("text.delta", {"text": ANSWER}),
    ("run.completed", {"reason": "stop", "rounds": 2}),
]


def trail_records(content: bool) -> list[Record]:
    trail = RunTrail("run-1", "alice", content=content)
    deciders = {("run-1", "c1"): "bob"}
    records = []
    for kind, data in RUN_EVENTS:
        record = trail.take(
            kind,
            {"run_id": "run-1", **data},
            lambda: ANSWER,
            lambda r, k: deciders.pop((r, k), None),
        )
        if record is not None:
            records.append(record)
    return records


def test_a_run_makes_ids_and_counts_only(events: EventLogger) -> None:
    records = trail_records(content=False)
    assert [schema for schema, _ in records] == [RUN, TOOL_APPROVAL, TOOL_APPROVAL, PROPOSAL, RUN]
    for schema, data in records:
        events.schemas.validate_event(schema, data)
    started, approved, denied, decided, ended = (data for _, data in records)
    assert started == {
        "action": "started",
        "run_id": "run-1",
        "session_id": "s1",
        "user": "alice",
        "model": "scripted",
        "soul": "specialist",
        "tools": 2,
        "prompt_chars": len(PROMPT),
    }
    assert (approved["state"], approved["by"], approved["user"]) == ("approved", "person", "bob")
    assert (denied["state"], denied["by"], denied["user"]) == ("denied", "policy", "alice")
    assert decided["cells"] == 2 and decided["notebook"] == "a.ipynb" and decided["user"] == "alice"
    assert ended["prompt_tokens"] == 17 and ended["completion_tokens"] == 8
    assert ended["cost"] == 0.75 and ended["tool_calls"] == 1 and ended["reason"] == "stop"
    text = json.dumps(records)
    assert PROMPT not in text and ANSWER not in text and "no thanks" not in text
    assert '"code"' not in text


def test_with_content_the_texts_are_there(events: EventLogger) -> None:
    records = trail_records(content=True)
    for schema, data in records:
        events.schemas.validate_event(schema, data)
    started, approved, _, decided, ended = (data for _, data in records)
    assert started["prompt"] == PROMPT and ended["answer"] == ANSWER
    assert approved["arguments"] == {"code": "1"} and decided["reason"] == "no thanks"


def manifest(**extra: Any) -> dict[str, Any]:
    return {
        "id": "art-1",
        "sha256": "0" * 64,
        "media_type": "text/plain",
        "size": 3,
        "title": "secret title",
        "source": {"kind": "scratch", "session_id": "s1", "path": "out.txt"},
        "created_by": "carol",
        **extra,
    }


def test_promotions_by_a_person_and_by_the_agent(events: EventLogger) -> None:
    schema, data = promotion_record(manifest(), True, "alice", content=False)
    events.schemas.validate_event(schema, data)
    assert schema == PROMOTION and data["by"] == "person" and data["user"] == "carol"
    assert "title" not in data and data["path"] == "out.txt" and data["created"] is True
    agent = {"run_id": "run-1", "call_id": "c9", "run_seq": 4}
    _, data = promotion_record(manifest(created_by="agent", agent=agent), False, "alice", True)
    events.schemas.validate_event(PROMOTION, data)
    assert (data["by"], data["user"], data["run_id"], data["call_id"]) == (
        "agent",
        "alice",
        "run-1",
        "c9",
    )
    assert data["title"] == "secret title"
