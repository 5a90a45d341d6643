from __future__ import annotations

import json

from jupyter_resolve.contracts.frames import FrameTranslator


def frame(t: str, **d: object) -> str:
    return json.dumps({"t": t, "d": d})


def run_frames(*payloads: str, budget: int = 8) -> list[tuple[str, dict]]:  # type: ignore[type-arg]
    tr = FrameTranslator(budget=budget)
    out = []
    for p in payloads:
        out.extend(tr.translate_payload(p))
    return out


def test_text_run_translates_in_order() -> None:
    events = run_frames(
        frame("run", run_id="r", model="m", rounds=8),
        frame("round", n=1, of=8),
        frame("reasoning", text="thinking"),
        frame("delta", text="Hel"),
        frame("delta", text="lo"),
        frame("usage", prompt_tokens=10, completion_tokens=2),
        frame("done", reason="stop", rounds=1),
    )
    assert [t for t, _ in events] == [
        "reasoning.delta",
        "text.delta",
        "text.delta",
        "usage",
        "run.completed",
    ]
    assert events[-1][1] == {"reason": "stop", "rounds": 1}  # text seen: no summary


def test_tool_frames_become_requested_and_completed() -> None:
    events = run_frames(
        frame("tool_call", call_id="c1", name="python", arguments={"code": "1"}),
        frame(
            "tool_result",
            call_id="c1",
            name="python",
            ok=True,
            output="1",
            mime=None,
            truncated=False,
            ms=3,
        ),
    )
    assert events[0] == (
        "tool.requested",
        {"call_id": "c1", "name": "python", "arguments": {"code": "1"}},
    )
    assert events[1][0] == "tool.completed"
    assert events[1][1]["ok"] is True and events[1][1]["ms"] == 3


def test_gateway_completed_call_is_not_duplicated() -> None:
    tr = FrameTranslator(budget=8)
    tr.note_tool_completed("c1")
    out = tr.translate_payload(
        frame("tool_result", call_id="c1", name="python", ok=True, output="", ms=1)
    )
    assert out == []


def test_malformed_frames_become_run_error_not_exceptions() -> None:
    bad = [
        "not json",
        "[]",
        json.dumps({"t": "nope", "d": {}}),
        frame("delta"),
        json.dumps({"t": "done", "d": {"reason": "whatever"}}),
        '{"t": "delta"}',
    ]
    for payload in bad:
        events = run_frames(payload)
        assert len(events) == 1, payload
        assert events[0][0] == "run.error"
        assert events[0][1]["code"] == "runtime_protocol"


def test_empty_run_carries_summary_with_folded_trace() -> None:
    payloads = []
    for i in range(4):
        payloads.append(frame("round", n=i + 1, of=4))
        payloads.append(frame("tool_call", call_id=f"c{i}", name="python", arguments={}))
        payloads.append(
            frame(
                "tool_result", call_id=f"c{i}", name="python", ok=False, output="NameError: x", ms=1
            )
        )
    payloads.append(frame("done", reason="budget", rounds=4))
    events = run_frames(*payloads, budget=4)
    completed = events[-1]
    assert completed[0] == "run.completed"
    summary = completed[1]["summary"]
    assert summary["tools"] == "python ×4"
    assert summary["rounds"] == 4 and summary["budget"] == 4
    assert "NameError" in summary["last_error"]
    assert "retry" not in summary["hint"].lower()


def test_exactly_one_completed_and_nothing_after() -> None:
    tr = FrameTranslator(budget=8)
    first = tr.translate_payload(frame("done", reason="stop", rounds=1))
    assert [t for t, _ in first] == ["run.completed"]
    assert tr.translate_payload(frame("delta", text="late")) == []
    assert tr.abort("x", "y") == []
    assert tr.finish("cancelled") == []


def test_abort_closes_with_error() -> None:
    tr = FrameTranslator(budget=8)
    tr.translate_payload(frame("round", n=2, of=8))
    out = tr.abort("runtime_died", "gone")
    assert [t for t, _ in out] == ["run.error", "run.completed"]
    assert out[1][1]["reason"] == "error" and out[1][1]["rounds"] == 2
    assert out[1][1]["summary"]["last_error"] == "gone"
