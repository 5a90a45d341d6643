"""The local provider's requests and its count of a stream (pure: no server is started)."""

from __future__ import annotations

import logging
from typing import Any

from jupyter_resolve.providers.local import LocalProvider, StreamTally
from jupyter_resolve.providers.local_server import LocalModelServer

TOOLS = [{"type": "function", "function": {"name": "list_dir", "parameters": {}}}]


def provider(tool_choice: str = "") -> LocalProvider:
    server = LocalModelServer("/nowhere.gguf", context=512, threads=1, log=logging.getLogger())
    return LocalProvider(server, max_tokens=24, tool_choice=tool_choice)


def body(*messages: dict[str, Any]) -> dict[str, Any]:
    return {"model": "gpt-4o", "messages": list(messages), "tools": TOOLS}


USER = {"role": "user", "content": "ls"}
CALL = {
    "role": "assistant",
    "content": None,
    "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "list_dir"}}],
}
RESULT = {"role": "tool", "tool_call_id": "c1", "content": "a.txt"}


def test_the_request_names_the_served_model_asks_for_the_prompt_cache_and_is_bounded() -> None:
    payload = provider().payload(body(USER))
    assert payload["model"] == "local"
    assert payload["cache_prompt"] is True
    assert payload["max_tokens"] == 24
    assert payload["stream"] is True
    assert "tool_choice" not in payload


def test_a_turn_that_only_called_tools_goes_with_empty_content() -> None:
    payload = provider().payload(body(USER, CALL, RESULT))
    assert payload["messages"][1]["content"] == ""
    assert payload["messages"][1]["tool_calls"] == CALL["tool_calls"]


def test_the_configured_tool_is_forced_only_in_a_round_that_answers_the_person() -> None:
    forced = provider("list_dir")
    assert forced.payload(body(USER))["tool_choice"] == {
        "type": "function",
        "function": {"name": "list_dir"},
    }
    assert "tool_choice" not in forced.payload(body(USER, CALL, RESULT))
    assert "tool_choice" not in provider("shell").payload(body(USER))  # not offered


def test_a_stream_without_usage_gets_an_estimate_marked_estimated() -> None:
    tally = StreamTally()
    tally.see({"model": "local", "choices": [{"index": 0, "delta": {"content": "x" * 40}}]})
    tally.see({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    assert tally.choices == 2 and not tally.usage
    usage = tally.estimated_usage({"messages": [USER]})["usage"]
    assert usage["estimated"] is True
    assert usage["completion_tokens"] == 10
    assert usage["prompt_tokens"] > 0


def test_an_empty_stream_has_no_choices() -> None:
    tally = StreamTally()
    tally.see({"choices": [], "usage": None})
    assert tally.choices == 0
