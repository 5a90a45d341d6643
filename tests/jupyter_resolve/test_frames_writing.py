"""``tool_progress`` frames (a tool call being written) → ``tool.writing`` events (issue 46.4)."""

from __future__ import annotations

import json

from jupyter_resolve.contracts.frames import FrameTranslator


def frame(t: str, **d: object) -> str:
    return json.dumps({"t": t, "d": d})


def test_a_call_being_written_is_announced_with_about_its_tokens() -> None:
    tr = FrameTranslator(budget=8)
    first = tr.translate_payload(
        frame("tool_progress", index=0, call_id="c1", name="python", pieces=0, bytes=0)
    )
    later = tr.translate_payload(
        frame("tool_progress", index=0, call_id="c1", name="python", pieces=37, bytes=90)
    )
    assert first == [("tool.writing", {"index": 0, "call_id": "c1", "name": "python", "tokens": 0})]
    # one streamed fragment is about one token
    assert later[0][1]["tokens"] == 37


def test_few_large_fragments_count_four_bytes_a_token() -> None:
    tr = FrameTranslator(budget=8)
    [(kind, data)] = tr.translate_payload(
        frame("tool_progress", index=1, call_id=None, name="read_file", pieces=2, bytes=401)
    )
    assert kind == "tool.writing"
    assert data == {"index": 1, "call_id": None, "name": "read_file", "tokens": 101}


def test_writing_is_no_call_and_a_bad_frame_is_an_error_not_a_crash() -> None:
    tr = FrameTranslator(budget=8)
    tr.translate_payload(frame("tool_progress", index=0, name="python", pieces=3, bytes=9))
    assert tr.tool_names == []  # the empty-run summary counts calls made, not announced
    [(kind, data)] = tr.translate_payload(frame("tool_progress", index=-1, name="python"))
    assert kind == "run.error" and data["code"] == "runtime_protocol"
    done = tr.translate_payload(frame("done", reason="stop", rounds=1))
    assert "Tool calls" not in done[0][1]["summary"]["text"]
