"""OpenAI <-> Anthropic Messages translation, as pure functions."""

from __future__ import annotations

from typing import Any

import pytest

from jupyter_resolve.contracts.errors import ProviderError
from jupyter_resolve.providers.anthropic_translate import StreamTranslator, to_messages_request
from tests.fakes import streams

BODY: dict[str, Any] = {
    "model": "runtime-model",
    "messages": [
        {"role": "system", "content": "You are careful."},
        {"role": "system", "content": "soul: planner"},
        {"role": "user", "content": "Compute 6*7 and read a.txt."},
        {
            "role": "assistant",
            "content": "Running both.",
            "tool_calls": [
                {
                    "id": "toolu_1",
                    "type": "function",
                    "function": {"name": "python", "arguments": '{"code": "print(6*7)"}'},
                },
                {
                    "id": "toolu_2",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": '{"path": "a.txt"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "toolu_1", "content": "42"},
        {"role": "tool", "tool_call_id": "toolu_2", "content": "hello"},
        {"role": "user", "content": [{"type": "text", "text": "And now?"}]},
    ],
    "tools": [
        {
            "type": "function",
            "function": {
                "name": "python",
                "description": "Run Python.",
                "parameters": {"type": "object", "properties": {"code": {"type": "string"}}},
            },
        },
    ],
    "tool_choice": "auto",
    "stream": True,
}


def test_request_translation() -> None:
    request = to_messages_request(BODY, model="claude-x", max_tokens=1000)
    # the body's model (the run's choice) wins over the configured default
    assert request["model"] == "runtime-model" and request["max_tokens"] == 1000
    assert request["stream"] is True
    assert request["system"] == "You are careful.\n\nsoul: planner"
    assert request["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Compute 6*7 and read a.txt."}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Running both."},
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "python",
                    "input": {"code": "print(6*7)"},
                },
                {
                    "type": "tool_use",
                    "id": "toolu_2",
                    "name": "read_file",
                    "input": {"path": "a.txt"},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "42"},
                {"type": "tool_result", "tool_use_id": "toolu_2", "content": "hello"},
                {"type": "text", "text": "And now?"},
            ],
        },
    ]
    assert request["tools"] == [
        {
            "name": "python",
            "description": "Run Python.",
            "input_schema": {"type": "object", "properties": {"code": {"type": "string"}}},
        }
    ]
    assert request["tool_choice"] == {"type": "auto"}


def test_request_model_falls_back_to_configured_and_max_tokens_from_body() -> None:
    request = to_messages_request({**BODY, "max_tokens": 77}, model="", max_tokens=1000)
    assert request["model"] == "runtime-model" and request["max_tokens"] == 77
    request = to_messages_request({**BODY, "model": ""}, model="claude-x", max_tokens=1000)
    assert request["model"] == "claude-x"


def test_assistant_without_text_has_only_tool_use() -> None:
    body = {
        "messages": [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "t", "function": {"name": "python", "arguments": ""}}],
            }
        ]
    }
    (message,) = to_messages_request(body, model="m", max_tokens=1)["messages"]
    assert message["content"] == [{"type": "tool_use", "id": "t", "name": "python", "input": {}}]


def feed_all(translator: StreamTranslator, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [c for e in events for c in translator.feed(e["type"], e)]


def block(index: int, kind: str, **extra: Any) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": {"type": kind, **extra}}


def delta(index: int, **d: Any) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": d}


def finished_thinking(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    chunks = feed_all(StreamTranslator("claude-x", include_usage=False), events)
    return [b for d in streams.deltas(chunks) for b in d.get("thinking_blocks", [])]


def test_a_signature_sent_with_the_block_and_as_a_delta_is_kept_once() -> None:
    # LiteLLM's /v1/messages bridge: the whole block in content_block_start, then the same
    # signature again as signature_delta (Anthropic's SDKs assign a signature_delta)
    events = [
        block(0, "thinking", thinking="Six times seven.", signature="c2ln"),
        delta(0, type="signature_delta", signature="c2ln"),
        {"type": "content_block_stop", "index": 0},
    ]
    assert finished_thinking(events) == [
        {"type": "thinking", "thinking": "Six times seven.", "signature": "c2ln"}
    ]


def test_a_signature_in_pieces_is_joined() -> None:
    events = [
        block(0, "thinking", thinking="", signature=""),
        delta(0, type="thinking_delta", thinking="hmm"),
        delta(0, type="signature_delta", signature="sig-"),
        delta(0, type="signature_delta", signature="abc"),
        {"type": "content_block_stop", "index": 0},
    ]
    assert finished_thinking(events) == [
        {"type": "thinking", "thinking": "hmm", "signature": "sig-abc"}
    ]


def test_stream_translation() -> None:
    events = [
        {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "model": "claude-x",
                "usage": {"input_tokens": 10, "output_tokens": 1},
            },
        },
        {"type": "ping"},
        block(0, "thinking", thinking=""),
        delta(0, type="thinking_delta", thinking="hmm"),
        delta(0, type="signature_delta", signature="sig"),
        {"type": "content_block_stop", "index": 0},
        block(1, "text", text=""),
        delta(1, type="text_delta", text="Running."),
        block(2, "tool_use", id="toolu_a", name="python", input={}),
        delta(2, type="input_json_delta", partial_json=""),
        delta(2, type="input_json_delta", partial_json='{"code": '),
        delta(2, type="input_json_delta", partial_json='"1"}'),
        block(3, "tool_use", id="toolu_b", name="read_file", input={}),
        delta(3, type="input_json_delta", partial_json='{"path": "a"}'),
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use"},
            "usage": {"output_tokens": 40},
        },
        {"type": "message_stop"},
    ]
    chunks = feed_all(StreamTranslator("claude-x", include_usage=True), events)
    assert streams.reasoning(chunks) == "hmm"
    assert streams.text(chunks) == "Running."
    calls = streams.tool_calls(chunks)
    assert calls == [
        {"id": "toolu_a", "name": "python", "arguments": {"code": "1"}},
        {"id": "toolu_b", "name": "read_file", "arguments": {"path": "a"}},
    ]
    indexes = {t["index"] for d in streams.deltas(chunks) for t in d.get("tool_calls", [])}
    assert indexes == {0, 1}  # tool_use blocks counted, not block indexes 2 and 3
    assert streams.finish_reasons(chunks) == ["tool_calls"]
    assert streams.usage(chunks) == [
        {"prompt_tokens": 10, "completion_tokens": 40, "total_tokens": 50}
    ]
    assert chunks[-1]["choices"] == [] and all(c["id"] == "msg_1" for c in chunks)


@pytest.mark.parametrize(
    ("stop", "finish"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("max_tokens", "length"),
        ("tool_use", "tool_calls"),
    ],
)
def test_stop_reasons(stop: str, finish: str) -> None:
    t = StreamTranslator("m", include_usage=False)
    chunks = t.feed("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop}})
    chunks += t.feed("message_stop", {"type": "message_stop"})
    assert streams.finish_reasons(chunks) == [finish] and streams.usage(chunks) == []


def test_error_event_raises() -> None:
    t = StreamTranslator("m", include_usage=False)
    with pytest.raises(ProviderError) as caught:
        t.feed(
            "error",
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        )
    assert caught.value.code == "provider_stream_error" and "Overloaded" in caught.value.message
