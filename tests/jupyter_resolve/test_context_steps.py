"""Fitting in steps (pure, DESIGN 10.6): a session sheds context down to the low-water mark at
once, then keeps that state, so each prompt extends the one before; the cache marks that rely
on it (Anthropic's breakpoint on the stable history, llama.cpp's ``cache_prompt``)."""

from __future__ import annotations

from typing import Any

from jupyter_resolve.contracts.context import (
    ELIDED_MARK,
    LOW_WATER,
    answer_room,
    fit,
    fit_round,
)
from jupyter_resolve.providers.anthropic_translate import to_messages_request
from jupyter_resolve.providers.families import Family, parse_families, shape_request
from jupyter_resolve.providers.openai import OpenAIProvider
from tests.jupyter_resolve.test_transcript import long_session, pairs_whole

WINDOW = 8_000
BUDGET = WINDOW - answer_room(WINDOW)
OUTPUT = "y" * 3_000
Message = dict[str, Any]


def own_round(n: int) -> list[Message]:
    """A run's round: its python call and the result (3,000 characters)."""
    call = {"id": f"own{n}", "type": "function", "function": {"name": "python", "arguments": "{}"}}
    return [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": f"own{n}", "content": OUTPUT},
    ]


def extends(earlier: list[Message], later: list[Message]) -> bool:
    return later[: len(earlier)] == earlier


def elided_count(messages: list[Message]) -> int:
    return sum(1 for m in messages if str(m.get("content", "")).startswith(ELIDED_MARK))


def test_a_step_sheds_down_to_the_low_water_mark_and_keeps_pairs_whole() -> None:
    transcript = long_session(turns=12, output_chars=3_000)
    assembly = fit(transcript, system="S", message="q", window=WINDOW)
    assert assembly.after_tokens <= BUDGET * LOW_WATER < BUDGET
    assert assembly.dropped_turns == 0 and assembly.elided > 0
    assert assembly.elided_tools == elided_count(assembly.history)
    assert pairs_whole(assembly.history)
    compacted = assembly.compacted
    assert compacted is not None and compacted["elided_tools"] == assembly.elided_tools


def test_the_state_a_step_left_is_kept_and_the_next_turn_extends_the_last() -> None:
    transcript = long_session(turns=12, output_chars=3_000)
    first = fit(transcript, system="S", message="q", window=WINDOW)
    # the next turn: the transcript grew by a turn; fitted with the state the step left, the
    # history sent before is sent again, byte for byte, and no new step is taken
    grown = long_session(turns=13, output_chars=3_000)
    again = fit(grown, system="S", message="q2", window=WINDOW, elided_tools=first.elided_tools)
    assert again.compacted is None and again.elided == 0
    assert extends(first.history, again.history)
    # without it, fitting from scratch elides a different set: the prefix breaks
    fresh = fit(grown, system="S", message="q2", window=WINDOW)
    assert not extends(first.history, fresh.history)


def test_rounds_of_a_run_extend_each_other_across_a_step() -> None:
    """A run's rounds grow past the budget: one step, then every round extends the last."""
    system = {"role": "system", "content": "S"}
    history = long_session(turns=3, output_chars=3_000)
    messages = [system, *history, {"role": "user", "content": "go on"}]
    state, prompts, steps = 0, [], 0
    for n in range(14):
        messages += own_round(n)
        fitted, compacted = fit_round(messages, window=WINDOW, elided_tools=state)
        if compacted is not None:
            steps += 1
            assert compacted["after_tokens"] <= BUDGET * LOW_WATER
            state = compacted["elided_tools"]
        assert fitted[-1]["content"] == OUTPUT  # the result the round answers stays whole
        assert pairs_whole(fitted[1:])
        prompts.append(fitted)
    assert steps == 2  # a step, then room for several rounds (not one), then the next
    breaks = [i for i in range(1, len(prompts)) if not extends(prompts[i - 1], prompts[i])]
    assert len(breaks) == steps


def test_the_newest_elided_output_carries_an_anthropic_breakpoint() -> None:
    history = fit(
        long_session(turns=12, output_chars=3_000), system="S", message="q", window=WINDOW
    )
    body = {
        "messages": [{"role": "system", "content": "S"}, *history.history, *own_round(0)],
        "tools": [{"type": "function", "function": {"name": "python", "parameters": {}}}],
    }
    request = to_messages_request(body, model="claude-x", max_tokens=1000, cache=True)
    marked = [
        (m, block)
        for m, message in enumerate(request["messages"])
        for block in message["content"]
        if "cache_control" in block
    ]
    assert len(marked) == 2  # with the tool's and the system's: four, Anthropic's most
    (stable, block), (last, _) = marked
    assert last == len(request["messages"]) - 1
    assert block["type"] == "tool_result" and block["content"].startswith(ELIDED_MARK)
    later = [
        b
        for message in request["messages"][stable + 1 :]
        for b in message["content"]
        if b.get("type") == "tool_result" and str(b["content"]).startswith(ELIDED_MARK)
    ]
    assert not later  # the newest elided one


def test_llama_cpp_families_get_cache_prompt_and_openai_never_does() -> None:
    families = parse_families({"local": {"prefixes": ["qwen"], "cache_prompt": True}})
    body = {"model": "qwen2.5-7b", "messages": [{"role": "user", "content": "hi"}]}
    assert shape_request(body, families["local"])["cache_prompt"] is True
    assert "cache_prompt" not in shape_request(body, Family(prefixes=()))
    local = OpenAIProvider("http://127.0.0.1:8080/v1", None, "qwen2.5-7b", families=families)
    assert local.payload(body)["cache_prompt"] is True
    openai = OpenAIProvider("https://api.openai.com/v1", "sk-x", "qwen2.5-7b", families=families)
    assert "cache_prompt" not in openai.payload(body)
