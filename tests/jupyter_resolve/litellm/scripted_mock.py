"""A LiteLLM proxy callback (loaded by the proxy from its config folder, run by the proxy's own
Python in .venv/litellm, never imported by the test suite) that scripts mock responses with tool
calls, which a config's ``litellm_params`` cannot carry on a streamed request:

- ``mock_tool_calls`` is read only on the non-streamed branch of ``litellm.main.mock_completion``;
  with ``stream=True`` it streams the default text "This is a mock request" instead;
- a ``mock_response`` mapping (YAML) is returned as ``ModelResponse(**mock_response)`` before the
  streaming branch, and the proxy answers 500 ``'ModelResponse' object has no attribute
  '__aiter__'``.

A ``ModelResponse`` object is streamed, though: ``mock_completion`` turns it into one chunk
(``convert_model_response_to_streaming``) that ``mock_completion_streaming_obj`` yields through the
proxy's ``CustomStreamWrapper``. Such an object can only come from Python, hence this
``async_pre_call_hook`` (it runs after the proxy has stripped client-sent ``mock_*`` fields).

Models named ``scripted-*`` answer a conversation whose last turn is a tool result with text, any
other with one call of the ``python`` tool. ``scripted-thinking`` puts a thinking block (with its
signature) before that call and, like the Anthropic API, answers the tool result only if the
assistant turn before it carries that block unchanged; otherwise it says what was missing.
"""

from __future__ import annotations

from typing import Any

from litellm import ModelResponse
from litellm.integrations.custom_logger import CustomLogger

TOOL_CALL_ID = "call_litellm_1"
TOOL_ARGUMENTS = '{"code": "print(6*7)"}'
ANSWER = "LiteLLM says the answer is 42."
THINKING = {
    "type": "thinking",
    "thinking": "Six times seven; run it.",
    "signature": "c2lnLWxpdGVsbG0tMQ==",
}


def _after_tool_result(messages: list[dict[str, Any]]) -> bool:
    last = messages[-1] if messages else {}
    content = last.get("content")
    blocks = content if isinstance(content, list) else []
    # the OpenAI wire has a "tool" turn, Anthropic's a user turn with a tool_result block
    return last.get("role") == "tool" or any(b.get("type") == "tool_result" for b in blocks)


def _thinking_came_back(messages: list[dict[str, Any]]) -> bool:
    turn = messages[-2] if len(messages) > 1 else {}
    blocks = turn.get("content") if turn.get("role") == "assistant" else None
    return isinstance(blocks, list) and bool(blocks) and blocks[0] == THINKING


def _message(message: dict[str, Any], finish_reason: str) -> ModelResponse:
    return ModelResponse(choices=[{"index": 0, "finish_reason": finish_reason, "message": message}])


class ScriptedMock(CustomLogger):
    async def async_pre_call_hook(
        self, user_api_key_dict: Any, cache: Any, data: dict[str, Any], call_type: Any
    ) -> dict[str, Any]:
        if not str(data.get("model", "")).startswith("scripted-"):
            return data
        if _after_tool_result(data.get("messages", [])):
            # a string on /v1/messages takes its unstreamed mock path (see the test module)
            anthropic = call_type == "anthropic_messages"
            answer = ANSWER
            if data["model"] == "scripted-thinking" and not _thinking_came_back(data["messages"]):
                answer = "The thinking block did not come back unchanged."
            text = {"role": "assistant", "content": answer}
            data["mock_response"] = _message(text, "stop") if anthropic else answer
        else:
            call = {
                "id": TOOL_CALL_ID,
                "type": "function",
                "function": {"name": "python", "arguments": TOOL_ARGUMENTS},
            }
            message: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [call]}
            if data["model"] == "scripted-thinking":
                message["thinking_blocks"] = [THINKING]
                message["reasoning_content"] = THINKING["thinking"]
            data["mock_response"] = _message(message, "tool_calls")
        return data


scripted_mock = ScriptedMock()
