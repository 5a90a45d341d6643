from __future__ import annotations

import pytest

from jupyter_resolve.contracts.bodies import ChatMessage, ChatRequest
from jupyter_resolve.contracts.chat_body import assemble_chat, message_text
from jupyter_resolve.contracts.errors import BadRequest


def build(request: ChatRequest, **kw: object):  # type: ignore[no-untyped-def]
    args: dict[str, object] = {
        "run_id": "r1",
        "model": "m",
        "tools": [],
        "discipline": "DISCIPLINE",
    }
    args.update(kw)
    return assemble_chat(request, **args)[0]  # type: ignore[arg-type]


def test_last_user_message_becomes_message_rest_history() -> None:
    req = ChatRequest.model_validate(
        {
            "messages": [
                {"role": "user", "content": "first"},
                {"role": "assistant", "content": "answer"},
                {"role": "user", "content": "second"},
            ]
        }
    )
    body = build(req)
    assert body.message == "second"
    assert body.history == [
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "answer"},
    ]
    assert body.run_id == "r1"
    assert body.budget.rounds == 8


def test_system_order_soul_client_discipline_last() -> None:
    req = ChatRequest.model_validate(
        {
            "messages": [
                {"role": "system", "content": "from messages"},
                {"role": "user", "content": "q"},
            ],
            "system": "client system",
        }
    )
    body = build(req, soul_prompt="SOUL")
    assert body.system.split("\n\n") == ["SOUL", "from messages", "client system", "DISCIPLINE"]
    assert body.history == []  # system messages fold into `system`, not history


def test_content_parts_are_joined() -> None:
    msg = ChatMessage.model_validate(
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}
    )
    assert message_text(msg) == "ab"


def test_no_user_message_is_a_bad_request_naming_messages() -> None:
    req = ChatRequest.model_validate({"messages": [{"role": "assistant", "content": "x"}]})
    with pytest.raises(BadRequest, match="messages"):
        build(req)


def test_tool_messages_pass_through_history_verbatim() -> None:
    tool_call = {"id": "c1", "type": "function", "function": {"name": "python", "arguments": "{}"}}
    req = ChatRequest.model_validate(
        {
            "messages": [
                {"role": "user", "content": "run"},
                {"role": "assistant", "content": None, "tool_calls": [tool_call]},
                {"role": "tool", "tool_call_id": "c1", "content": "42"},
                {"role": "user", "content": "and?"},
            ]
        }
    )
    body = build(req, rounds=3, tools=[{"type": "function", "function": {"name": "python"}}])
    assert body.history[1] == {"role": "assistant", "tool_calls": [tool_call]}
    assert body.history[2] == {"role": "tool", "tool_call_id": "c1", "content": "42"}
    assert body.budget.rounds == 3
    assert body.tools[0]["function"]["name"] == "python"
