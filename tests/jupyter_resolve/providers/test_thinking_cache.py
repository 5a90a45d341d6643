"""Extended thinking and prompt caching on the Anthropic wire; reasoning-model parameters on the
OpenAI wire — pure translation, then the provider against the fake server that refuses what
the real API refuses (tests/fakes/anthropic_rules.py), with fixtures from the vendors' docs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from jupyter_resolve.contracts.prices import price_for, round_cost
from jupyter_resolve.providers import AnthropicProvider
from jupyter_resolve.providers.anthropic_translate import StreamTranslator, to_messages_request
from jupyter_resolve.providers.chunks import cache_counts
from jupyter_resolve.providers.families import family_of, parse_families, shape_request
from jupyter_resolve.providers.prices import load_prices
from jupyter_resolve.runs.inference_notes import InferenceNotes, RunNotes
from tests.fakes import anthropic_server as fake_anthropic
from tests.fakes import streams
from tests.fakes._server import Reply
from tests.fakes.anthropic_server import FakeAnthropic

FIXTURES = Path(__file__).parents[2] / "fixtures" / "providers"
EPHEMERAL = {"type": "ephemeral"}


def fixture(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    return loaded


def feed(translator: StreamTranslator, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [c for e in events for c in translator.feed(e["type"], e)]


def loop_body(thinking: list[dict[str, Any]] | None) -> dict[str, Any]:
    turn: dict[str, Any] = {
        "role": "assistant",
        "content": "Running it.",
        "tool_calls": [
            {"id": "toolu_1", "type": "function", "function": {"name": "python", "arguments": "{}"}}
        ],
    }
    if thinking is not None:
        turn["thinking_blocks"] = thinking
    return {
        "model": "claude-x",
        "messages": [
            {"role": "system", "content": "Be careful."},
            {"role": "user", "content": "compute"},
            turn,
            {"role": "tool", "tool_call_id": "toolu_1", "content": "42"},
        ],
        "tools": [
            {"type": "function", "function": {"name": "b_tool", "parameters": {}}},
            {"type": "function", "function": {"name": "python", "parameters": {}}},
        ],
        "temperature": 0.3,
    }


SIGNED = {"type": "thinking", "thinking": "I should run it.", "signature": "sig-abc"}
REDACTED = {"type": "redacted_thinking", "data": "opaque=="}


def test_stream_keeps_thinking_text_signature_and_redacted_blocks() -> None:
    events = [
        {"type": "message_start", "message": {"usage": {"input_tokens": 5, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking"}},
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "thinking_delta", "thinking": "I should "},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "thinking_delta", "thinking": "run it."},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "signature_delta", "signature": "sig-"},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "signature_delta", "signature": "abc"},
        },
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": dict(REDACTED)},
        {"type": "content_block_stop", "index": 1},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 9},
        },
        {"type": "message_stop"},
    ]
    chunks = feed(StreamTranslator("claude-x", include_usage=True), events)
    assert streams.reasoning(chunks) == "I should run it."
    blocks = [b for d in streams.deltas(chunks) for b in d.get("thinking_blocks", [])]
    assert blocks == [SIGNED, REDACTED]


def test_thinking_request_sends_blocks_first_and_drops_what_thinking_refuses() -> None:
    request = to_messages_request(
        loop_body([SIGNED, REDACTED]), model="", max_tokens=1000, thinking=2048
    )
    assert request["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert request["max_tokens"] > 2048 and "temperature" not in request
    turn = request["messages"][1]
    assert turn["content"][:2] == [SIGNED, REDACTED]
    assert [b["type"] for b in turn["content"][2:]] == ["text", "tool_use"]
    # without thinking the blocks stay home, and the sampling settings go through
    plain = to_messages_request(loop_body([SIGNED]), model="", max_tokens=1000)
    assert "thinking" not in plain and plain["temperature"] == 0.3
    assert all(b["type"] not in ("thinking",) for b in plain["messages"][1]["content"])


def test_a_loop_turn_without_blocks_or_a_forced_tool_goes_without_thinking() -> None:
    assert "thinking" not in to_messages_request(
        loop_body(None), model="", max_tokens=1000, thinking=2048
    )
    forced = {**loop_body([SIGNED]), "tool_choice": "required"}
    assert "thinking" not in to_messages_request(forced, model="", max_tokens=1000, thinking=2048)


def test_cache_breakpoints_on_tools_system_and_the_newest_block() -> None:
    request = to_messages_request(
        loop_body([SIGNED]), model="", max_tokens=1000, thinking=2048, cache=True
    )
    assert request["tools"][-1]["cache_control"] == EPHEMERAL
    assert "cache_control" not in request["tools"][0]
    assert request["system"] == [
        {"type": "text", "text": "Be careful.", "cache_control": EPHEMERAL}
    ]
    marked = [
        (m, b["type"])
        for m, message in enumerate(request["messages"])
        for b in message["content"]
        if "cache_control" in b
    ]
    assert marked == [(2, "tool_result")]


def test_the_fake_refuses_what_the_api_refuses() -> None:
    from tests.fakes.anthropic_rules import refusal

    good = to_messages_request(loop_body([SIGNED]), model="", max_tokens=1000, thinking=2048)
    assert refusal(good, {"sig-abc": "I should run it."}) is None
    missing = {**good, "messages": [*good["messages"]]}
    missing["messages"][1] = {**good["messages"][1], "content": good["messages"][1]["content"][1:]}
    said = refusal(missing, {"sig-abc": "I should run it."})
    assert said is not None and "must start with a thinking block" in said
    tampered = json.loads(json.dumps(good).replace("I should run it.", "I should run it!"))
    said = refusal(tampered, {"sig-abc": "I should run it."})
    assert said is not None and "Invalid `signature`" in said


def docs_scenario(doc: dict[str, Any]) -> list[Reply]:
    """The documented response, streamed; then the documented answer."""
    f = fake_anthropic
    thinking, text, tool = doc["response_1"]["content"]
    frames = [
        f.message_start(),
        *f.thinking_block(0, thinking["thinking"], thinking["signature"]),
        *f.text_block(1, text["text"]),
        f.block_start(2, {**tool, "input": {}}),
        f.block_delta(2, {"type": "input_json_delta", "partial_json": json.dumps(tool["input"])}),
        f.block_stop(2),
        *f.finish("tool_use", 100),
    ]
    return [f.stream(frames), f.text_reply(doc["response_2_text"])]


async def test_docs_thinking_with_tool_use_over_two_rounds() -> None:
    """Round 2 carries round 1's thinking block unchanged: the gateway's notes put it back on
    the assistant turn the runtime rebuilt without it, and the fake (which answers 400
    otherwise) accepts it."""
    doc = fixture("anthropic_thinking_tool_use.json")
    notes, run_notes = InferenceNotes({}), RunNotes()
    tool = doc["tool"]
    tools = [
        {"type": "function", "function": {"name": tool["name"], "parameters": tool["input_schema"]}}
    ]
    body: dict[str, Any] = {
        "model": doc["model"],
        "messages": [{"role": "user", "content": doc["user"]}],
        "tools": tools,
        "max_tokens": doc["max_tokens"],
    }
    async with FakeAnthropic(docs_scenario(doc)) as fake:
        provider = AnthropicProvider(fake.base_url, "k", "", thinking=10000, timeout=5)
        watch = notes.watch(run_notes, doc["model"])
        first = [watch(c) for c in await streams.collect(provider, body, "run-1")]
        (call,) = streams.tool_calls(first)
        turn = {  # what the runtime sends back: no thinking blocks
            "role": "assistant",
            "content": streams.text(first),
            "tool_calls": [
                {
                    "id": call["id"],
                    "type": "function",
                    "function": {"name": call["name"], "arguments": json.dumps(call["arguments"])},
                }
            ],
        }
        result = {"role": "tool", "tool_call_id": call["id"], "content": doc["tool_result"]}
        second_body = {**body, "messages": [*body["messages"], turn, result]}
        second = await streams.collect(provider, notes.restore(run_notes, second_body), "run-1")
        # the same turn without its blocks: the request goes without thinking (else a 400)
        await streams.collect(provider, second_body, "run-1")
        await provider.aclose()
    assert "thinking" not in fake.requests[2].body
    assert streams.text(second) == doc["response_2_text"]
    sent = fake.requests[1].body
    assert sent["thinking"] == doc["thinking"]
    assert sent["messages"][1]["content"][0] == doc["response_1"]["content"][0]
    assert sent["messages"][1]["content"][-1] == doc["response_1"]["content"][2]
    assert sent["messages"][2]["content"][0]["type"] == "tool_result"
    assert fake.refusals == []


async def test_fake_answers_400_when_the_block_is_missing() -> None:
    """The real-API rule, straight at the fake: thinking on, the loop turn without its block."""
    doc = fixture("anthropic_thinking_tool_use.json")
    _thinking, text, tool = doc["response_1"]["content"]
    request = {
        "model": doc["model"],
        "max_tokens": doc["max_tokens"],
        "thinking": doc["thinking"],
        "messages": [
            {"role": "user", "content": doc["user"]},
            {"role": "assistant", "content": [text, tool]},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": tool["id"], "content": "88°F"}],
            },
        ],
    }
    async with FakeAnthropic(docs_scenario(doc)) as fake, httpx.AsyncClient() as client:
        answer = await client.post(f"{fake.base_url}/v1/messages", json=request)
    assert answer.status_code == 400
    assert answer.json()["error"]["type"] == "invalid_request_error"
    assert "must start with a thinking block" in answer.json()["error"]["message"]


def test_docs_cache_usage_fields_and_cost() -> None:
    doc = fixture("cache_usage.json")
    prices = load_prices({})
    sonnet = price_for("claude-sonnet-4-5-20250929", prices)
    assert sonnet is not None and sonnet.cache_read == 0.3
    costs = []
    for usage in (doc["anthropic_first"], doc["anthropic_second"]):
        events = [
            {"type": "message_start", "message": {"usage": {**usage, "output_tokens": 1}}},
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn"},
                "usage": {"output_tokens": usage["output_tokens"]},
            },
            {"type": "message_stop"},
        ]
        (chunk,) = streams.usage(feed(StreamTranslator("m", include_usage=True), events))
        total = (
            usage["input_tokens"]
            + usage["cache_creation_input_tokens"]
            + usage["cache_read_input_tokens"]
        )
        assert chunk["prompt_tokens"] == total
        read, write = cache_counts(chunk)
        assert (read, write) == (
            usage["cache_read_input_tokens"],
            usage["cache_creation_input_tokens"],
        )
        costs.append(
            round_cost(
                sonnet,
                prompt_tokens=total,
                completion_tokens=393,
                cached_tokens=read,
                cache_write_tokens=write,
            )
        )
    assert costs[0] == pytest.approx((21 * 3 + 188086 * 3.75 + 393 * 15) / 1e6)
    assert costs[1] == pytest.approx((21 * 3 + 188086 * 0.3 + 393 * 15) / 1e6)
    assert cache_counts(doc["openai"]) == (1920, 0)


def test_docs_reasoning_model_request_parameters() -> None:
    doc = fixture("openai_reasoning_request.json")
    body = doc["runtime_body"]
    family = family_of(body["model"])
    assert shape_request(body, family, reasoning_effort=doc["reasoning_effort"]) == doc["expected"]
    # a plain model keeps its parameters; reasoning text is never sent back, for any model
    history = {
        "model": "deepseek-reasoner",
        "temperature": 0.2,
        "messages": [{"role": "assistant", "content": "x", "reasoning_content": "why"}],
    }
    shaped = shape_request(history, family_of("deepseek-reasoner"), reasoning_effort="high")
    assert shaped == {
        "model": "deepseek-reasoner",
        "temperature": 0.2,
        "messages": [{"role": "assistant", "content": "x"}],
    }
    assert family_of("openrouter/openai/o3-mini").max_tokens_param == "max_completion_tokens"


def test_admin_families_extend_the_table() -> None:
    extra = parse_families({"qwq": {"prefixes": ["qwq"], "drop": ["temperature"]}})
    assert family_of("QwQ-32B", extra).drop == ("temperature",)
    with pytest.raises(ValueError, match="unknown setting"):
        parse_families({"x": {"prefixes": ["x"], "colour": "red"}})


async def test_cache_reads_reported_by_the_fake_reach_the_usage_chunk() -> None:
    """The fake counts as the API does: round 1 writes the prefix, round 2 reads it."""
    async with FakeAnthropic("tool_use") as fake:
        fake.count_cache = True
        provider = AnthropicProvider(fake.base_url, "k", "claude-x", timeout=5)
        body = loop_body(None)
        body["stream_options"] = {"include_usage": True}
        first = streams.usage(await streams.collect(provider, body))[0]
        body["messages"] = [*body["messages"], {"role": "user", "content": "and again"}]
        second = streams.usage(await streams.collect(provider, body))[0]
        await provider.aclose()
    assert cache_counts(first)[0] == 0 and cache_counts(first)[1] > 0
    assert cache_counts(second)[0] > 0
