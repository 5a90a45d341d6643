"""Steering's pure parts (issue 50.1): the message's bounds, the runtime's ``message`` frame as
``run.message`` (and the messages never delivered named by ``run.completed``), and the
transcript keeping the message as a user turn where it took effect."""

from __future__ import annotations

import json
from typing import Any

import pytest

from jupyter_resolve.contracts.bodies import Event
from jupyter_resolve.contracts.errors import BadRequest, TooLarge, TooManyRequests
from jupyter_resolve.contracts.frames import FrameTranslator
from jupyter_resolve.contracts.steering import MAX_CHARS, MAX_PENDING, check_message
from jupyter_resolve.contracts.transcript import fold_run


def frame(t: str, **d: object) -> str:
    return json.dumps({"t": t, "d": d})


def test_a_message_is_checked_before_it_is_sent() -> None:
    assert check_message("  use body_mass_g \n", 0) == "use body_mass_g"
    assert check_message("x" * MAX_CHARS, MAX_PENDING - 1) == "x" * MAX_CHARS
    with pytest.raises(BadRequest):
        check_message(" \n", 0)
    with pytest.raises(TooLarge) as large:
        check_message("x" * (MAX_CHARS + 1), 0)
    assert large.value.status == 413 and large.value.code == "message_too_large"
    with pytest.raises(TooManyRequests) as many:
        check_message("x", MAX_PENDING)
    assert many.value.code == "too_many_messages" and many.value.retry_after > 0


def test_the_message_frame_is_run_message_and_what_waits_is_named_at_the_end() -> None:
    translator = FrameTranslator(budget=8)
    assert not translator.attached
    assert translator.translate_payload(frame("run", run_id="r", model="m", rounds=8)) == []
    assert translator.attached  # the runtime has the run: messages may go to it
    translator.message_posted("m1")
    translator.message_posted("m2")
    translator.message_posted("m3")
    translator.message_withdrawn("m3")  # the runtime refused it
    assert translator.translate_payload(frame("message", id="m1", text="not that column")) == [
        ("run.message", {"id": "m1", "text": "not that column"})
    ]
    assert translator.waiting_messages == ["m2"]
    done = translator.translate_payload(frame("done", reason="stop", rounds=2))
    assert done[-1][1]["undelivered_messages"] == ["m2"]
    bad = FrameTranslator(budget=8).translate_payload(frame("message", id="m1"))
    assert bad[0][0] == "run.error" and "message" in bad[0][1]["message"]


def events(*pairs: tuple[str, dict[str, Any]]) -> list[Event]:
    return [Event(seq=i + 1, type=t, data={"run_id": "r", **d}) for i, (t, d) in enumerate(pairs)]


def call(call_id: str, output: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("tool.requested", {"call_id": call_id, "name": "python", "arguments": {"code": "1"}}),
        ("tool.completed", {"call_id": call_id, "name": "python", "ok": True, "output": output}),
    ]


def test_a_steering_message_is_a_user_turn_where_it_took_effect() -> None:
    messages = fold_run(
        events(
            ("run.started", {"session_id": "s", "prompt": "plot it"}),
            ("text.delta", {"text": "Plotting."}),
            *call("c1", "<Figure>"),
            ("run.message", {"id": "m1", "text": "just give the table"}),
            *call("c2", "| a |"),
            ("text.delta", {"text": "Here it is."}),
            ("run.message", {"id": "m2", "text": "and the median?"}),
            ("text.delta", {"text": "It is 3."}),
            ("run.completed", {"reason": "stop", "rounds": 3}),
        )
    )
    assert [m["role"] for m in messages] == [
        "user",
        "assistant",
        "tool",
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
        "assistant",
    ]
    assert messages[3] == {"role": "user", "content": "just give the table"}
    assert messages[6] == {"role": "assistant", "content": "Here it is."}
    assert messages[7] == {"role": "user", "content": "and the median?"}


def test_a_run_that_ends_on_a_message_gets_the_note() -> None:
    messages = fold_run(
        events(
            ("run.started", {"session_id": "s", "prompt": "plot it"}),
            *call("c1", "ok"),
            ("run.message", {"id": "m1", "text": "stop"}),
            ("run.completed", {"reason": "cancelled", "rounds": 1}),
        )
    )
    assert messages[-2] == {"role": "user", "content": "stop"}
    assert messages[-1] == {"role": "assistant", "content": "(no answer: the run ended cancelled)"}
