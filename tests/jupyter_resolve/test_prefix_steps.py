"""A context a prefix cache can reuse (DESIGN 10.6), end to end: a real server and runtime, a
session whose python outputs overflow ``c.Resolve.context_tokens``, the fake OpenAI server
recording each prompt. Once the session has shed context (a step), every later prompt, round
after round and turn after turn, extends the one before."""

from __future__ import annotations

from typing import Any

from jupyter_resolve.contracts.compaction import is_summary_request
from jupyter_resolve.contracts.context import ELIDED_MARK
from jupyter_resolve.providers import OpenAIProvider
from tests.conftest import Server
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.python_session import PythonSession
from tests.jupyter_resolve.test_sessions import recording

__all__ = ["recording"]  # the fixture, used by name

TURNS = 7  # four turns of 3,000-character outputs fill 8,000 tokens beside the tools


def extends(earlier: dict[str, Any], later: dict[str, Any]) -> bool:
    """The later request repeats the earlier one's tools and messages, then adds to them."""
    before: list[Any] = earlier["messages"]
    return bool(later["tools"] == earlier["tools"] and later["messages"][: len(before)] == before)


async def python_session(
    server: Server, gateway: Any, recording: list[FakeOpenAI], turns: int, *, summaries: bool
) -> tuple[list[dict[str, Any]], list[tuple[int, dict[str, Any]]]]:
    """``turns`` chats of one session at 8,000 tokens: the prompts the provider got (not the
    summarization requests) and each turn's ``context.compacted`` (its steps)."""
    fake = FakeOpenAI("text", reply_to=PythonSession(3_000))
    await fake.start()
    recording.append(fake)
    gateway.provider = OpenAIProvider(
        fake.base_url, "sk-test", "fake-model", max_retries=0, timeout=10
    )
    gateway.config.context_tokens = 8_000
    gateway.config.compaction_summaries = summaries
    try:
        steps = []
        for turn in range(turns):
            chat = await server.chat(f"Turn {turn}: run the next step.", session_id="s-prefix")
            assert chat.of("run.completed")[0]["reason"] == "stop"
            steps += [(turn, c) for c in chat.of("context.compacted")]
    finally:
        gateway.config.context_tokens = 0
        gateway.config.compaction_summaries = True
    prompts = [r.body for r in fake.requests if not is_summary_request(r.body)]
    assert len(prompts) == 2 * turns
    return prompts, steps


def breaks_of(prompts: list[dict[str, Any]]) -> list[int]:
    """The prompts that do not extend the one before."""
    return [i for i in range(1, len(prompts)) if not extends(prompts[i - 1], prompts[i])]


async def test_after_a_step_each_prompt_extends_the_one_before(
    server: Server, gateway: Any, recording: list[FakeOpenAI]
) -> None:
    prompts, steps = await python_session(server, gateway, recording, TURNS, summaries=True)
    # the session shed context: a step elided old outputs (it drops and summarizes turns only
    # later, when the elided turns alone outgrow the budget)
    assert steps, "no step: the session never outgrew the window"
    compacted = steps[0][1]
    assert compacted["elided"] >= 1 and compacted["turns"] == 0
    # a prompt breaks the prefix only where a step was taken (two prompts a turn)...
    breaks = breaks_of(prompts)
    step_turns = {turn for turn, _ in steps}
    assert breaks and all(i // 2 in step_turns for i in breaks), (breaks, step_turns)
    assert len(breaks) <= len(steps)
    # ...and from the first step on, round after round and turn after turn, each prompt extends
    # the one before until the next step (the old code elided a little more every round)
    after = breaks[0]
    following = breaks[1] if len(breaks) > 1 else len(prompts)
    assert following - after >= 4, breaks
    assert all(extends(prompts[i - 1], prompts[i]) for i in range(after + 1, following))
    # those prompts carry the outputs elided as the step left them, and the newest one whole
    later = prompts[following - 1]["messages"]
    elided = [m for m in later if m["role"] == "tool" and m["content"].startswith(ELIDED_MARK)]
    assert len(elided) == compacted["elided_tools"]
    assert later[-1]["role"] == "tool" and len(later[-1]["content"]) >= 3_000


async def test_turns_dropped_without_a_summary_stay_out_of_later_prompts(
    server: Server, gateway: Any, recording: list[FakeOpenAI]
) -> None:
    """Summaries off: a step that drops the oldest turns leaves them out of the next turns too
    (they came back before, and were dropped again a little further each turn)."""
    prompts, steps = await python_session(server, gateway, recording, 12, summaries=False)
    drops = [(turn, c) for turn, c in steps if c["turns"]]
    assert drops, steps
    turn, compacted = drops[0]
    assert "summarized_runs" not in compacted
    breaks = breaks_of(prompts)
    assert all(i // 2 in {t for t, _ in steps} for i in breaks), (breaks, steps)
    after = next(i for i in breaks if i // 2 == turn)
    following = next((i for i in breaks if i > after), len(prompts))
    assert following - after >= 4, breaks
    first_kept = prompts[after]["messages"][1]["content"]
    assert first_kept != "Turn 0: run the next step."
    assert all(p["messages"][1]["content"] == first_kept for p in prompts[after:following])
