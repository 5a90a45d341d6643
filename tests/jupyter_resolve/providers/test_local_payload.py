"""The local provider's requests, its prompt and grammar, its reading of the answer and its
count of a stream (pure: no server is started)."""

from __future__ import annotations

import logging
from typing import Any

from jupyter_resolve.providers.chunks import ChunkBuilder
from jupyter_resolve.providers.local import LocalProvider, StreamTally
from jupyter_resolve.providers.local_prompt import END, answer_grammar, first_sentence
from jupyter_resolve.providers.local_round import RoundReader
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


# The round the gateway asks of the server: its own prompt, the tools listed, a grammar.

PYTHON = {
    "type": "function",
    "function": {
        "name": "python",
        "description": "Run Python code in this session's kernel (an IPython kernel). More.",
        "parameters": {
            "type": "object",
            "properties": {"code": {"type": "string", "description": "Source."}},
            "required": ["code"],
        },
    },
}
PROPOSE = {
    "type": "function",
    "function": {
        "name": "notebook_propose",
        "description": "Propose cells for the person's notebook: they decide.",
        "parameters": {
            "type": "object",
            "properties": {
                "note": {"type": "string"},
                "cells": {
                    "type": "array",
                    "minItems": 1,
                    "items": {
                        "type": "object",
                        "properties": {
                            "cell_type": {"type": "string", "enum": ["code", "markdown"]},
                            "source": {"type": "string"},
                        },
                        "required": ["source"],
                    },
                },
            },
            "required": ["cells"],
        },
    },
}
SYSTEM = {"role": "system", "content": "Be brief."}


def lean(**kw: Any) -> LocalProvider:
    server = LocalModelServer("/nowhere.gguf", context=512, threads=1, log=logging.getLogger())
    return LocalProvider(server, max_tokens=24, tools=["python", "notebook_propose"], **kw)


def test_a_round_with_tools_lists_them_first_as_configured_and_holds_the_answer() -> None:
    local = lean(temperature=0.0, seed=7)
    payload = local.payload({"messages": [SYSTEM, USER], "tools": [PROPOSE, PYTHON]})
    request, tools = local.completion(payload)
    assert tools and request["stream"] is True and request["max_tokens"] == 24
    assert (request["temperature"], request["seed"], request["stop"]) == (0.0, 7, [END])
    prompt = request["prompt"]
    assert prompt.startswith("<|im_start|>system\nFunctions you can call:\nfunctions.")
    # the system text after the tools, how to answer last: nearest the conversation
    assert prompt.index("Be brief.") < prompt.index("Answer with a message (begin with")
    assert prompt.index('"note"?: string}\n\nBe brief.\n\nAnswer with a message') > 0
    # python first, as c.Resolve.local_tools lists it; a line and a signature each
    assert prompt.index("functions.python: Run Python code in this session's kernel.\n") < (
        prompt.index("functions.notebook_propose: Propose cells for the person's notebook.")
    )
    assert '{"code": string}' in prompt
    assert '{"cells": [{"source": string, "cell_type"?: "code"|"markdown"}], "note"?: string}' in (
        prompt
    )
    assert prompt.endswith("<|im_start|>user\nls<|im_end|>\n<|im_start|>assistant\n")
    grammar = request["grammar"]
    assert 'root ::= "message:\\n" text | "functions.python:\\n" args-python' in grammar
    assert 'args-python ::= "{" "\\"code\\": " str "}"' in grammar


def test_two_sessions_prompts_differ_only_from_their_own_lines_on() -> None:
    """The work folder is named at the system text's end: everything before it (the tools, the
    soul's text) is a prefix the server's KV cache keeps from the last session's prompt."""
    local = lean()

    def prompt(session: str) -> str:
        system = {"role": "system", "content": f"Be brief.\n- Write under /r/{session}/work/."}
        request, _ = local.completion(
            local.payload({"messages": [system, USER], "tools": [PYTHON]})
        )
        return str(request["prompt"])

    one, two = prompt("session-1"), prompt("session-2")
    shared = next(i for i, (a, b) in enumerate(zip(one, two, strict=False)) if a != b)
    assert one[:shared].endswith("Be brief.\n- Write under /r/session-")
    assert "functions.python:" in one[:shared]
    # then only the rest of the session's line, how to answer, the person's message
    assert one[shared:].startswith("1/work/.\n\nAnswer with a message (begin with")


def test_a_tool_result_is_in_the_next_prompt_and_a_call_as_it_was_written() -> None:
    call = {**CALL, "tool_calls": [{"id": "c1", "function": {"name": "python", "arguments": "{}"}}]}
    request, _ = lean().completion(lean().payload(body(USER, call, RESULT)))
    assert "<|im_start|>assistant\nfunctions.python:\n{}<|im_end|>\n" in request["prompt"]
    assert "<|im_start|>user\nResult of functions.python:\na.txt<|im_end|>\n" in request["prompt"]


def test_a_forced_tool_leaves_no_other_answer_and_none_leaves_only_words() -> None:
    forced = lean(tool_choice="python")
    request, _ = forced.completion(forced.payload({"messages": [USER], "tools": [PROPOSE, PYTHON]}))
    assert request["grammar"].startswith('root ::= "functions.python:\\n" args-python\n')
    plain = lean()
    payload = plain.payload({"messages": [USER], "tools": [PYTHON], "tool_choice": "none"})
    request, tools = plain.completion(payload)
    assert not tools and "grammar" not in request and "functions." not in request["prompt"]


def read(text_pieces: list[str], tools: bool = True) -> list[dict[str, Any]]:
    reader = RoundReader(ChunkBuilder("local"), tools=tools)
    chunks = [c for piece in text_pieces for c in reader.feed(piece)]
    return chunks + reader.close("stop")


def test_the_answer_text_becomes_words_or_one_call_as_it_streams() -> None:
    words = read(["mess", "age:\nHel", "lo"])
    assert [c["choices"][0]["delta"].get("content") for c in words[:-1]] == ["Hel", "lo"]
    assert words[-1]["choices"][0]["finish_reason"] == "stop"
    call = read(["functions.py", 'thon:\n{"co', 'de": "1"}'])
    first = call[0]["choices"][0]["delta"]["tool_calls"][0]
    assert first["function"] == {"name": "python", "arguments": '{"co'}
    assert first["id"].startswith("call_") and first["index"] == 0
    later = call[1]["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"]
    assert later == 'de": "1"}'
    assert call[-1]["choices"][0]["finish_reason"] == "tool_calls"
    assert read(["Hi ", "there"], tools=False)[0]["choices"][0]["delta"] == {"content": "Hi "}
    assert read(["oops"])[0]["choices"][0]["delta"] == {"content": "oops"}  # not its shape


def test_the_grammar_writes_json_that_parses_as_json_dumps_writes_it() -> None:
    rules = answer_grammar([PROPOSE])
    assert (
        'args-notebook-propose ::= "{" "\\"cells\\": " args-notebook-propose-cells '
        '(", " "\\"note\\": " str)? "}"'
    ) in rules
    assert 'chr ::= [^"\\\\\\x00-\\x1f]' in rules  # no raw control character in a string
    assert '"[" args-notebook-propose-cells-item (", " args-notebook-propose-cells-item)* "]"' in (
        rules
    )
    assert first_sentence("Read a notebook (cells): more. Then.") == "Read a notebook."
