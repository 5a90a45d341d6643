"""The translation of an agent's ``session/update`` notifications into normalized events
(jupyter_resolve/acp/events.py), alone: wire JSON in, events out."""

from __future__ import annotations

from typing import Any

import pytest

from jupyter_resolve.acp.events import (
    UpdateTranslator,
    block_text,
    call_id_of,
    choose_option,
    completion_of,
    diff_text,
    prompt_usage,
)
from jupyter_resolve.contracts.bodies import EVENT_TYPES


def text_chunk(kind: str, text: str) -> dict[str, Any]:
    return {"sessionUpdate": kind, "content": {"type": "text", "text": text}}


def test_message_and_thought_chunks() -> None:
    t = UpdateTranslator()
    assert t.translate(text_chunk("agent_message_chunk", "hel"), 0) == [
        ("text.delta", {"text": "hel"})
    ]
    assert t.translate(text_chunk("agent_thought_chunk", "hmm"), 0) == [
        ("reasoning.delta", {"text": "hmm"})
    ]
    link = {"type": "resource_link", "name": "a.txt", "uri": "file:///r/a.txt"}
    assert t.translate({"sessionUpdate": "agent_message_chunk", "content": link}, 0) == [
        ("text.delta", {"text": "[a.txt](file:///r/a.txt)"})
    ]
    # a loaded session's replay, the session's modes and commands: not run events
    assert t.translate(text_chunk("user_message_chunk", "earlier"), 0) == []
    assert t.translate({"sessionUpdate": "current_mode_update", "currentModeId": "x"}, 0) == []
    assert t.translate({"sessionUpdate": "available_commands_update"}, 0) == []
    assert t.translate(text_chunk("agent_message_chunk", ""), 0) == []


def test_a_tool_call_from_request_to_completion() -> None:
    t = UpdateTranslator()
    start = {
        "sessionUpdate": "tool_call",
        "toolCallId": "call_1",
        "title": "Edit a.py",
        "kind": "edit",
        "status": "pending",
        "rawInput": {"path": "/r/a.py"},
    }
    assert t.translate(start, 10.0) == [
        (
            "tool.requested",
            {
                "call_id": "call_1",
                "name": "edit",
                "title": "Edit a.py",
                "kind": "edit",
                "arguments": {"path": "/r/a.py"},
            },
        )
    ]
    running = {"sessionUpdate": "tool_call_update", "toolCallId": "call_1", "status": "in_progress"}
    assert t.translate(running, 10.5) == [("tool.started", {"call_id": "call_1", "name": "edit"})]
    assert t.translate(running, 10.6) == []  # started once
    diff = {"type": "diff", "path": "/r/a.py", "oldText": "x = 1\n", "newText": "x = 2\n"}
    done = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "call_1",
        "status": "completed",
        "content": [diff, {"type": "content", "content": {"type": "text", "text": "ok"}}],
        "locations": [{"path": "/r/a.py", "line": 1}],
    }
    [(kind, data)] = t.translate(done, 11.0)
    assert kind == "tool.completed"
    assert data["ok"] is True and data["ms"] == 500 and data["truncated"] is False
    assert data["output"] == "--- /r/a.py\n+++ /r/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n\nok"
    assert data["content"][0] == diff and data["locations"] == [{"path": "/r/a.py", "line": 1}]
    assert t.translate({**done, "status": "failed"}, 12.0) == []  # nothing after its end


def test_a_call_seen_only_at_its_end_still_starts_and_a_failure_is_not_ok() -> None:
    t = UpdateTranslator()
    update = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "x",
        "status": "failed",
        "rawOutput": {"error": "denied"},
    }
    events = t.translate(update, 1.0)
    assert [k for k, _ in events] == ["tool.requested", "tool.started", "tool.completed"]
    requested, completed = events[0][1], events[2][1]
    assert requested["name"] == "other" and requested["arguments"] == {}
    assert completed["ok"] is False and completed["output"] == '{"error": "denied"}'


def test_output_is_bounded_and_big_content_is_not_kept() -> None:
    t = UpdateTranslator()
    huge = {"type": "diff", "path": "/r/big.txt", "oldText": None, "newText": "x\n" * 150_000}
    update = {
        "sessionUpdate": "tool_call",
        "toolCallId": "big",
        "title": "Write",
        "status": "completed",
        "content": [huge],
    }
    completed = t.translate(update, 0)[-1][1]
    assert completed["truncated"] is True and len(completed["output"]) < 21_000
    assert completed["output"].startswith("--- /dev/null\n+++ /r/big.txt\n")
    assert "content" not in completed


def test_plan_and_usage_are_kept() -> None:
    t = UpdateTranslator()
    entries = [
        {"content": "read", "priority": "high", "status": "completed"},
        {"content": "write", "priority": "low", "status": "in_progress"},
        {"content": "test", "priority": "low", "status": "pending"},
    ]
    [(kind, data)] = t.translate({"sessionUpdate": "plan", "entries": entries}, 0)
    assert kind == "reasoning.delta" and data["plan"] == entries
    assert data["text"] == "Plan:\n- [x] read\n- [ ] write (in progress)\n- [ ] test\n"
    update = {
        "sessionUpdate": "usage_update",
        "used": 5,
        "size": 9,
        "cost": {"amount": 0.5, "currency": "EUR"},
    }
    assert t.translate(update, 0) == [
        (
            "usage",
            {
                "prompt_tokens": 0,
                "completion_tokens": 0,
                "context_tokens": 5,
                "context_window": 9,
                "agent_cost": {"amount": 0.5, "currency": "EUR"},
            },
        )
    ]
    wire = {"inputTokens": 3, "outputTokens": 4, "totalTokens": 7, "cachedReadTokens": 1}
    assert prompt_usage(wire) == (
        "usage",
        {"prompt_tokens": 3, "completion_tokens": 4, "cached_tokens": 1},
    )
    assert prompt_usage(None) is None


def test_every_event_is_a_normalized_one() -> None:
    t = UpdateTranslator()
    updates = [
        text_chunk("agent_message_chunk", "a"),
        text_chunk("agent_thought_chunk", "b"),
        {"sessionUpdate": "plan", "entries": []},
        {"sessionUpdate": "usage_update", "used": 1, "size": 2},
        {"sessionUpdate": "tool_call", "toolCallId": "c", "title": "t", "status": "completed"},
    ]
    kinds = {kind for u in updates for kind, _ in t.translate(u, 0)}
    assert kinds <= set(EVENT_TYPES)


@pytest.mark.parametrize(
    ("stop", "reason", "code"),
    [
        ("end_turn", "stop", None),
        ("cancelled", "cancelled", None),
        ("max_tokens", "budget", "agent_budget"),
        ("max_turn_requests", "budget", "agent_budget"),
        ("refusal", "error", "agent_refused"),
    ],
)
def test_stop_reasons(stop: str, reason: str, code: str | None) -> None:
    got, error = completion_of(stop)
    assert got == reason
    assert (error[1]["code"] if error else None) == code


def test_call_ids_fit_an_approval_url() -> None:
    assert call_id_of("toolu_01ABC") == "toolu_01ABC"
    odd = call_id_of("a/b c")
    assert odd.startswith("acp-") and odd == call_id_of("a/b c") and "/" not in odd
    assert call_id_of("x" * 300).startswith("acp-")


OPTIONS = [
    {"option_id": "a1", "kind": "allow_once"},
    {"option_id": "a2", "kind": "allow_always"},
    {"option_id": "r1", "kind": "reject_once"},
]


def test_a_decision_picks_the_agents_option() -> None:
    assert choose_option(OPTIONS, "approve", False) == "a1"
    assert choose_option(OPTIONS, "approve", True) == "a2"
    assert choose_option(OPTIONS, "deny", False) == "r1"
    assert choose_option(OPTIONS, "deny", True) == "r1"  # only once offered: that one
    assert choose_option(OPTIONS[:2], "deny", False) is None  # none fits: cancelled
    wire = [{"optionId": "w", "kind": "allow_once"}]
    assert choose_option(wire, "approve", False) == "w"


def test_block_and_diff_text() -> None:
    assert (
        block_text({"type": "image", "mimeType": "image/png", "data": "..."})
        == "[image: image/png]"
    )
    embedded = {"type": "resource", "resource": {"uri": "file:///a", "text": "body"}}
    assert block_text(embedded) == "body"
    assert diff_text({"path": "n.txt", "oldText": None, "newText": "a\n"}) == (
        "--- /dev/null\n+++ n.txt\n@@ -0,0 +1 @@\n+a\n"
    )
