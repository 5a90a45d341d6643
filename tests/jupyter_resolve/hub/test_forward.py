"""The service's relay helpers (jupyter_resolve.hub.forward): keep-alives while the upstream is
quiet, and the usage read from an answer's bytes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from jupyter_resolve.hub.forward import UsageWatch, _with_keepalives


async def slow(pieces: list[bytes], pause: float) -> AsyncIterator[bytes]:
    for piece in pieces:
        await asyncio.sleep(pause)
        yield piece


async def test_a_quiet_upstream_gets_keepalives_and_nothing_is_lost() -> None:
    got = [p async for p in _with_keepalives(slow([b"a", b"b"], 0.25), 0.1)]
    assert [p for p in got if p] == [b"a", b"b"]
    assert got.count(b"") >= 2  # at least one per quiet stretch
    fast = [p async for p in _with_keepalives(slow([b"a", b"b"], 0.0), 0.0)]
    assert fast == [b"a", b"b"]


async def test_reading_on_after_a_break_continues_where_it_stopped() -> None:
    pieces = _with_keepalives(slow([b"1", b"2", b"3"], 0.01), 1.0)
    async for piece in pieces:
        assert piece == b"1"
        break
    assert [p async for p in pieces] == [b"2", b"3"]


def test_usage_and_the_end_of_an_openai_stream() -> None:
    watch = UsageWatch("openai")
    watch.feed(b'data: {"choices": []}\n\ndata: {"usage": {"prompt_tokens": 5, ', True)
    watch.feed(b'"completion_tokens": 7}}\n\ndata: [DONE]\n\n', True)
    assert watch.done and watch.used().tokens == 12


def test_a_runs_error_carries_the_providers_code_not_the_runtimes() -> None:
    from jupyter_resolve.runs.inference_notes import InferenceNotes, RunNotes

    notes, run_1, run_2 = InferenceNotes({}), RunNotes(), RunNotes()
    notes.failed(run_1, "budget_exceeded")
    error = ("run.error", {"code": "inference_http", "message": "bob has used 20 tokens …"})
    assert notes.enrich(run_1, [error])[0][1]["code"] == "budget_exceeded"
    assert notes.enrich(run_1, [error])[0][1]["code"] == "inference_http"  # once
    notes.failed(run_2, "budget_exceeded")
    other = ("run.error", {"code": "runtime_protocol", "message": "x"})
    assert notes.enrich(run_2, [other])[0][1]["code"] == "runtime_protocol"
