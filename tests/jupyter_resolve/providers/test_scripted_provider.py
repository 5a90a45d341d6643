"""ScriptedProvider: script replay per run, souls, exhaustion, bad files, the demo, chunking."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from jupyter_resolve.contracts.errors import ProviderError
from jupyter_resolve.providers import ScriptedProvider
from jupyter_resolve.providers.scripted import PROGRESS_CODE
from tests.fakes import streams

PYTHON_TOOL = {"type": "function", "function": {"name": "python", "parameters": {}}}


def body(*messages: dict[str, Any], tools: bool = True, usage: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {"model": "any", "messages": list(messages), "stream": True}
    if tools:
        out["tools"] = [PYTHON_TOOL]
    if usage:
        out["stream_options"] = {"include_usage": True}
    return out


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def write_script(tmp_path: Path, *turns: dict[str, Any]) -> Path:
    path = tmp_path / "script.jsonl"
    path.write_text("\n".join(json.dumps(t) for t in turns) + "\n", encoding="utf-8")
    return path


async def test_script_replays_per_run(tmp_path: Path) -> None:
    script = write_script(
        tmp_path,
        {
            "content": "Let me run it.",
            "reasoning": "Think first.",
            "tool_calls": [{"name": "python", "arguments": {"code": "print(6*7)"}}],
        },
        {"content": "It printed 42."},
    )
    p = ScriptedProvider(script)
    first = await streams.collect(p, body(user("go")), "run-a")
    assert streams.text(first) == "Let me run it."
    assert streams.reasoning(first) == "Think first."
    (call,) = streams.tool_calls(first)
    assert call["name"] == "python" and call["arguments"] == {"code": "print(6*7)"}
    assert call["id"].startswith("call_")
    assert streams.finish_reasons(first) == ["tool_calls"]
    # another run starts at turn 0, without disturbing run-a
    other = await streams.collect(p, body(user("go")), "run-b")
    assert streams.text(other) == "Let me run it."
    second = await streams.collect(p, body(user("go")), "run-a")
    assert streams.text(second) == "It printed 42."
    assert streams.finish_reasons(second) == ["stop"]
    assert streams.tool_calls(second) == []


async def test_exhausted_script_says_so_and_stops(tmp_path: Path) -> None:
    p = ScriptedProvider(write_script(tmp_path, {"content": "only turn"}))
    await streams.collect(p, body(user("x")), None)
    chunks = await streams.collect(p, body(user("x")), None)  # None is one sequence of its own
    assert "no more turns" in streams.text(chunks)
    assert streams.tool_calls(chunks) == [] and streams.finish_reasons(chunks) == ["stop"]


async def test_soul_filtering(tmp_path: Path) -> None:
    script = write_script(
        tmp_path,
        {"content": "planner says", "soul": "planner"},
        {"content": "anyone says"},
        {"content": "evaluator says", "soul": "evaluator"},
    )
    p = ScriptedProvider(script)
    system = {"role": "system", "content": "You plan.\nsoul: planner\nBe brief."}
    planner = [streams.text(await streams.collect(p, body(system, user("q")), "r1")) for _ in "ab"]
    assert planner == ["planner says", "anyone says"]
    evaluator = {"role": "system", "content": "soul: evaluator"}
    got = streams.text(await streams.collect(p, body(evaluator, user("q")), "r2"))
    assert got == "anyone says"
    no_soul = streams.text(await streams.collect(p, body(user("q")), "r3"))
    assert no_soul == "anyone says"


async def test_missing_script_is_script_invalid(tmp_path: Path) -> None:
    p = ScriptedProvider(tmp_path / "nope.jsonl")
    with pytest.raises(ProviderError) as caught:
        await streams.collect(p, body(user("x")))
    assert caught.value.code == "script_invalid" and caught.value.status == 500
    assert "nope.jsonl" in caught.value.message


@pytest.mark.parametrize(
    "bad",
    [
        "{not json",
        '["a list"]',
        '{"content": 3}',
        '{"tool_calls": [{"arguments": {}}]}',
        '{"contnet": "typo"}',
    ],
)
async def test_bad_line_names_file_and_line(tmp_path: Path, bad: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"content": "fine"}\n\n' + bad + "\n", encoding="utf-8")
    p = ScriptedProvider(path)
    with pytest.raises(ProviderError) as caught:
        await streams.collect(p, body(user("x")))
    assert caught.value.code == "script_invalid"
    assert "bad.jsonl" in caught.value.message and "line 3" in caught.value.message


async def test_demo_runs_fenced_python() -> None:
    p = ScriptedProvider(None)
    ask = user("Please run:\n```python\nprint(6*7)\n```\nthanks")
    chunks = await streams.collect(p, body(ask))
    assert streams.text(chunks).startswith("(offline scripted model)")
    (call,) = streams.tool_calls(chunks)
    assert call["name"] == "python" and call["arguments"] == {"code": "print(6*7)\n"}
    argument_pieces = [
        t["function"]["arguments"]
        for d in streams.deltas(chunks)
        for t in d.get("tool_calls", [])
        if "id" not in t
    ]
    assert len(argument_pieces) >= 2
    first = next(t for d in streams.deltas(chunks) for t in d.get("tool_calls", []))
    assert first["type"] == "function" and first["function"] == {"name": "python", "arguments": ""}
    assert streams.finish_reasons(chunks) == ["tool_calls"]


async def test_demo_runs_a_loop_that_prints_progress() -> None:
    chunks = await streams.collect(ScriptedProvider(None), body(user("Print progress, please")))
    (call,) = streams.tool_calls(chunks)
    assert call["name"] == "python" and call["arguments"] == {"code": PROGRESS_CODE}
    assert "step {step} of 5" in PROGRESS_CODE and "time.sleep(0.3)" in PROGRESS_CODE


async def test_demo_reports_tool_output() -> None:
    p = ScriptedProvider(None)
    messages = [
        user("```py\nprint(6*7)\n```"),
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "python", "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "42\n" + "x" * 3000},
    ]
    chunks = await streams.collect(p, body(*messages))
    said = streams.text(chunks)
    assert said.startswith("(offline scripted model)") and "42" in said
    assert "c.Resolve.provider" in said
    assert len(said) < 1600  # quoted output is cut
    assert streams.tool_calls(chunks) == [] and streams.finish_reasons(chunks) == ["stop"]


async def test_demo_plans_without_code_or_without_python_tool() -> None:
    p = ScriptedProvider(None)
    for request in (
        body(user("How do I fit a curve?")),
        body(user("```python\n1\n```"), tools=False),
    ):
        chunks = await streams.collect(p, request)
        said = streams.text(chunks)
        assert said.startswith("(offline scripted model)")
        assert "1. " in said and "2. " in said and "3. " in said
        assert "c.Resolve.provider" in said
        assert streams.tool_calls(chunks) == []


async def test_streaming_shape_and_usage(tmp_path: Path) -> None:
    p = ScriptedProvider(write_script(tmp_path, {"content": "one two three four five six seven"}))
    chunks = await streams.collect(p, body(user("x")))
    assert len([d for d in streams.deltas(chunks) if d.get("content")]) >= 3
    for c in chunks:
        assert c["object"] == "chat.completion.chunk" and c["model"] == "scripted"
        assert {"id", "created"} <= set(c)
    assert len({c["id"] for c in chunks}) == 1
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] > 0
    no_usage = await streams.collect(p, body(user("x"), usage=False), "other")
    assert streams.usage(no_usage) == []


def test_describe() -> None:
    assert ScriptedProvider(None).describe()["name"] == "scripted"
    assert ScriptedProvider(Path("s.jsonl"), model="m").describe()["model"] == "m"
