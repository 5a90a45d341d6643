"""Compaction's pure parts (DESIGN 9.1): fitting with room for a summary, the summarization
request, the offline model's summary, and fitting one round in flight."""

from __future__ import annotations

import json
from typing import Any

from jupyter_resolve.contracts.bodies import ChatRequest
from jupyter_resolve.contracts.chat_body import assemble_chat
from jupyter_resolve.contracts.compaction import (
    SUMMARY_MARKER,
    extractive_summary,
    is_summary_request,
    summary_message,
    summary_request,
    summary_room,
)
from jupyter_resolve.contracts.context import LOW_WATER, answer_room, fit_round
from tests.jupyter_resolve.test_transcript import long_session, pairs_whole

WINDOW = 8_000


def assemble(transcript: list[dict[str, Any]], *, summarize: bool) -> Any:
    request = ChatRequest.model_validate({"messages": [{"role": "user", "content": "now?"}]})
    return assemble_chat(
        request,
        run_id="r",
        model="m",
        tools=[],
        discipline="D",
        transcript=transcript,
        window=WINDOW,
        summarize=summarize,
    )


def test_turns_are_dropped_to_the_low_water_mark_less_the_summarys_room() -> None:
    transcript = long_session()
    budget = WINDOW - answer_room(WINDOW)
    low = int(budget * LOW_WATER)
    body, plain = assemble(transcript, summarize=False)
    body, summarized = assemble(transcript, summarize=True)
    # a step: well below the budget, so that the next turns fit without another
    assert plain.after_tokens <= low and plain.after_tokens > low - summary_room(budget)
    assert summarized.after_tokens <= low - summary_room(budget)
    assert summarized.dropped_turns > plain.dropped_turns
    assert summarized.dropped[0]["role"] == "user" and pairs_whole(summarized.dropped)
    assert body.history[0]["role"] == "user" and pairs_whole(body.history)
    assert len([m for m in summarized.dropped if m["role"] == "user"]) == summarized.dropped_turns


def test_the_summary_request_is_bounded_and_keeps_the_newest_text() -> None:
    dropped = long_session(turns=40)
    request = summary_request(dropped, model="m", max_chars=2_000, max_tokens=300)
    assert is_summary_request(request) and request["max_tokens"] == 300
    assert request["messages"][0]["content"].startswith(SUMMARY_MARKER)
    text = request["messages"][1]["content"]
    assert len(text) <= 2_000 + 40 and text.startswith("[…older text cut]")
    assert "question 39" in text and "question 0\n" not in text
    assert "assistant called " in text and "tool result: wrote out/file39.csv" in text
    assert not is_summary_request({"messages": [{"role": "system", "content": "hi"}]})
    assert not is_summary_request({"messages": "nonsense"})


def test_the_offline_summary_lists_the_persons_requests_across_summaries() -> None:
    first = summary_request(long_session(turns=2), model="m", max_chars=10_000, max_tokens=100)
    text = extractive_summary(first)
    assert text == "The person asked: question 0; question 1"
    again = [summary_message(text, 2), *long_session(turns=1)]
    again[1] = {**again[1], "content": "question 2"}
    second = summary_request(again, model="m", max_chars=10_000, max_tokens=100)
    assert extractive_summary(second) == "The person asked: question 0; question 1; question 2"
    assert summary_message("S", 1)["content"] == (
        "[Summary of the 1 earlier turn of this session, compacted to fit]\nS"
    )


def a_round(history_turns: int, output: str) -> list[dict[str, Any]]:
    """system, a transcript, the run's message, its call and the result it is answering."""
    own: list[dict[str, Any]] = [
        {"role": "user", "content": "the run's question"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "own", "type": "function", "function": {"name": "python", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "own", "content": output},
    ]
    return [{"role": "system", "content": "S"}, *long_session(turns=history_turns), *own]


def test_a_round_that_fits_is_sent_as_it_came() -> None:
    messages = a_round(1, "small")
    fitted, compacted = fit_round(messages, window=WINDOW)
    assert compacted is None and fitted == messages


def test_a_round_over_budget_elides_then_leaves_out_old_turns_never_its_own() -> None:
    output = "y" * 4_000
    messages = a_round(3, output)
    fitted, compacted = fit_round(messages, window=2_048)
    assert compacted is not None and compacted["elided"] == 3 and compacted["turns"] == 0
    assert fitted[-1]["content"] == output  # the result the round answers stays whole
    assert compacted["after_tokens"] <= 2_048 - answer_room(2_048)
    messages = a_round(60, output)
    fitted, compacted = fit_round(messages, window=2_048)
    assert compacted is not None and compacted["turns"] > 0
    assert fitted[0] == messages[0] and fitted[-3:] == messages[-3:]
    assert fitted[1]["role"] == "user" and pairs_whole(fitted[1:])
    assert "left out" in compacted["note"]


def test_a_request_that_surely_fits_is_not_counted_and_one_that_may_not_is() -> None:
    from jupyter_resolve.contracts.context import fit_round, surely_fits

    args = {str(i): i for i in range(300)}  # str() of an object is longer than its JSON
    call = {"id": "c", "type": "function", "function": {"name": "python", "arguments": args}}
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c", "content": "x" * 3000},
    ]
    body_bytes = len(json.dumps({"messages": messages}, separators=(",", ":")))
    for window in range(1000, 20000, 250):
        if surely_fits(body_bytes, len(messages), window=window):
            assert fit_round(messages, window=window)[1] is None, window
    assert surely_fits(body_bytes, len(messages), window=200_000)
    assert not surely_fits(body_bytes, len(messages), window=2_000)
