"""Compaction over a real server and runtime (DESIGN 9.1): the oldest turns dropped to fit the
window are summarized by the model, the summary is logged and then stands in for them."""

from __future__ import annotations

from typing import Any

from jupyter_resolve.contracts.compaction import SUMMARY_MARKER
from tests.conftest import SSE, Server
from tests.fakes.openai_server import FakeOpenAI, error, text_reply
from tests.jupyter_resolve.test_sessions import SECOND, first_turn, provider, recording

__all__ = ["recording"]  # the fixture, used by name

FIRST = "My favourite number is 7319."
QUESTION = "What is my favourite number?"
SUMMARY = "The person said their favourite number is 7319; python computed 6*7 = 42."


async def replays_identically(server: Server, stream: SSE) -> None:
    run_id = stream.of("run.started")[0]["run_id"]
    replay = await server.stream(f"/resolve/api/runs/{run_id}/events", method="GET")
    assert [(e.id, e.event, e.data) for e in replay.events] == [
        (e.id, e.event, e.data) for e in stream.events
    ]


async def squeezed_chat(
    gateway: Any, server: Server, prompt: str, session: str, window: int = 1024
) -> SSE:
    """A chat in a small window (1024 is less than the system prompt and tools alone)."""
    gateway.config.context_tokens = window
    try:
        return await server.chat(prompt, session_id=session)
    finally:
        gateway.config.context_tokens = 0


async def test_dropped_turns_are_summarized_logged_and_reused(
    server: Server, gateway: Any, recording: list[FakeOpenAI]
) -> None:
    replies = [*first_turn()[:2], text_reply(SUMMARY), text_reply(SECOND), text_reply("Yes.")]
    fake = await provider(gateway, recording, replies)
    # a first turn far too long for the window; the summary, the system text and the question fit
    first = await server.chat(FIRST + " Noted." * 6_000, session_id="s-sum")
    first_run = first.of("run.started")[0]["run_id"]
    second = await squeezed_chat(gateway, server, QUESTION, "s-sum", window=4_096)
    assert second.text() == SECOND
    assert second.types()[:2] == ["run.started", "context.compacted"]
    compacted = second.of("context.compacted")[0]
    assert compacted["turns"] == 1 and compacted["summarized_runs"] == [first_run]
    assert compacted["summary"] == SUMMARY and "dropped" in compacted["note"]
    # the summarization request: its own system text, the dropped turn whole (call, result)
    asked = fake.requests[2].body["messages"]
    assert asked[0]["role"] == "system" and asked[0]["content"].startswith(SUMMARY_MARKER)
    assert FIRST in asked[1]["content"] and "python" in asked[1]["content"]
    # the round after it: the summary opens the history, then the new message
    sent = fake.requests[3].body["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "user"]
    assert (
        sent[1]["content"].startswith("[Summary of the 1 earlier turn")
        and SUMMARY in (sent[1]["content"])
    )
    assert sent[2]["content"] == QUESTION
    await replays_identically(server, second)
    # the next chat reads the summary back from the log: no new summarization request
    third = await server.chat("Thanks. Is it odd?", session_id="s-sum")
    assert third.text() == "Yes." and not third.of("context.compacted")
    sent = fake.requests[4].body["messages"]
    assert len(fake.requests) == 5
    assert [m["role"] for m in sent] == ["system", "user", "user", "assistant", "user"]
    assert SUMMARY in sent[1]["content"] and sent[2]["content"] == QUESTION
    transcript = (await server.get("/resolve/api/sessions/s-sum/transcript")).json()
    assert SUMMARY in transcript["messages"][0]["content"]


async def test_without_a_summary_the_dropped_turns_are_left_out(
    server: Server, gateway: Any, recording: list[FakeOpenAI]
) -> None:
    fake = await provider(gateway, recording, first_turn())
    await server.chat(FIRST, session_id="s-small")
    gateway.config.compaction_summaries = False
    try:
        second = await squeezed_chat(gateway, server, QUESTION, "s-small")
    finally:
        gateway.config.compaction_summaries = True
    assert second.types()[:2] == ["run.started", "context.compacted"]
    compacted = second.of("context.compacted")[0]
    assert compacted["turns"] == 1 and compacted["before_tokens"] > compacted["after_tokens"]
    assert "dropped" in compacted["summary"] and "summarized_runs" not in compacted
    sent = fake.requests[2].body["messages"]
    assert [m["role"] for m in sent] == ["system", "user"]  # no orphaned call or result
    assert sent[-1]["content"] == QUESTION
    await replays_identically(server, second)


async def test_a_failed_summary_still_answers_and_says_why(
    server: Server, gateway: Any, recording: list[FakeOpenAI]
) -> None:
    broken = error(400, "This model does not summarize today.", "invalid_request_error")
    replies = [*first_turn()[:2], broken, text_reply(SECOND)]
    fake = await provider(gateway, recording, replies)
    await server.chat(FIRST, session_id="s-broken")
    second = await squeezed_chat(gateway, server, QUESTION, "s-broken")
    assert second.text() == SECOND
    compacted = second.of("context.compacted")[0]
    assert "no summary" in compacted["note"] and "summarized_runs" not in compacted
    assert [m["role"] for m in fake.requests[3].body["messages"]] == ["system", "user"]


async def test_the_offline_model_summarizes_the_persons_requests(
    server: Server, gateway: Any
) -> None:
    await server.chat("Remember the word heliotrope.", session_id="s-offline")
    await server.chat("And the number 12.", session_id="s-offline")
    third = await squeezed_chat(gateway, server, "What did I ask?", "s-offline")
    compacted = third.of("context.compacted")[0]
    assert compacted["turns"] == 2 and len(compacted["summarized_runs"]) == 2
    assert compacted["summary"] == (
        "The person asked: Remember the word heliotrope.; And the number 12."
    )
    assert third.of("run.completed")[0]["reason"] == "stop"
