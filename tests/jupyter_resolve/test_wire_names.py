from __future__ import annotations

from jupyter_resolve.providers.wire_names import chunk_from_wire, request_to_wire, wire_name


def test_dotted_names_go_out_safe_and_come_back() -> None:
    body = {
        "tools": [
            {"type": "function", "function": {"name": "subagents.delegate"}},
            {"type": "function", "function": {"name": "python"}},
        ],
        "messages": [
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": "c",
                        "type": "function",
                        "function": {"name": "subagents.delegate", "arguments": "{}"},
                    }
                ],
            },
        ],
    }
    wire, back = request_to_wire(body)
    assert [t["function"]["name"] for t in wire["tools"]] == ["subagents__delegate", "python"]
    assert wire["messages"][0]["tool_calls"][0]["function"]["name"] == "subagents__delegate"
    assert body["tools"][0]["function"]["name"] == "subagents.delegate"  # input untouched
    call = body["messages"][0]["tool_calls"][0]  # type: ignore[index]
    assert call["function"]["name"] == "subagents.delegate"
    chunk = {
        "choices": [
            {"delta": {"tool_calls": [{"index": 0, "function": {"name": "subagents__delegate"}}]}}
        ]
    }
    assert (
        chunk_from_wire(chunk, back)["choices"][0]["delta"]["tool_calls"][0]["function"]["name"]
        == "subagents.delegate"
    )


def test_safe_names_pass_through_untouched() -> None:
    body = {"tools": [{"type": "function", "function": {"name": "read_file"}}], "messages": []}
    wire, back = request_to_wire(body)
    assert wire is body and back == {}
    assert wire_name("x." * 40) == "x__" * 21 + "x"  # cut to the 64-character limit
