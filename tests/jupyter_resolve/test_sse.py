from __future__ import annotations

import json

from jupyter_resolve.contracts.bodies import Event
from jupyter_resolve.contracts.completions import CompletionShaper
from jupyter_resolve.contracts.sse import data_payload, format_event


def test_event_frame_shape() -> None:
    raw = format_event(3, "text.delta", {"run_id": "r", "text": "é"}).decode()
    lines = raw.split("\n")
    assert lines[0] == "id: 3" and lines[1] == "event: text.delta"
    assert json.loads(lines[2][len("data: ") :]) == {"run_id": "r", "text": "é"}
    assert raw.endswith("\n\n")


def test_data_payload_with_and_without_space() -> None:
    assert data_payload("data: x") == "x"
    assert data_payload("data:x") == "x"
    assert data_payload("event: y") is None


def test_completion_shaper_collects_text_and_usage() -> None:
    s = CompletionShaper("r1", "scripted")
    s.feed(Event(seq=2, type="text.delta", data={"run_id": "r1", "text": "hi"}))
    s.feed(Event(seq=3, type="usage", data={"prompt_tokens": 3, "completion_tokens": 1}))
    out = s.feed(Event(seq=4, type="run.completed", data={"reason": "budget", "rounds": 8}))
    assert out[0]["choices"][0]["finish_reason"] == "length"
    done = s.completion()
    assert done["choices"][0]["message"]["content"] == "hi"
    assert done["usage"]["total_tokens"] == 4
    assert not s.failed()


def test_completion_shaper_error_without_text_is_failure() -> None:
    s = CompletionShaper("r1", "m")
    s.feed(Event(seq=2, type="run.error", data={"code": "provider_auth", "message": "401"}))
    assert s.feed(Event(seq=3, type="run.completed", data={"reason": "error", "rounds": 1})) == []
    assert s.failed()
