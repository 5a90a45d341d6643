"""The session transcript fold and context assembly (pure)."""

from __future__ import annotations

import json
from typing import Any

from jupyter_resolve.contracts.bodies import ChatRequest, Event
from jupyter_resolve.contracts.chat_body import assemble_chat, continues_session
from jupyter_resolve.contracts.context import (
    Instruction,
    answer_room,
    calibration,
    context_window,
    estimate,
    fit,
    pointers,
    system_prompt,
)
from jupyter_resolve.contracts.transcript import fold_run, fold_session, transcript_digest


def events(*pairs: tuple[str, dict[str, Any]]) -> list[Event]:
    return [Event(seq=i + 1, type=t, data={"run_id": "r", **d}) for i, (t, d) in enumerate(pairs)]


def a_run(prompt: str, call_id: str, output: str, answer: str) -> list[Event]:
    return events(
        ("run.started", {"session_id": "s", "prompt": prompt}),
        ("text.delta", {"text": "Let me "}),
        ("text.delta", {"text": "look."}),
        ("reasoning.delta", {"text": "secret thoughts"}),
        ("tool.requested", {"call_id": call_id, "name": "python", "arguments": {"code": "1+1"}}),
        ("tool.started", {"call_id": call_id, "name": "python"}),
        ("tool.completed", {"call_id": call_id, "name": "python", "ok": True, "output": output}),
        ("text.delta", {"text": answer}),
        ("usage", {"prompt_tokens": 10, "completion_tokens": 5}),
        ("run.completed", {"reason": "stop", "rounds": 2}),
    )


def test_a_run_folds_to_prompt_call_result_answer_without_reasoning() -> None:
    messages = fold_run(a_run("compute", "c1", "2", "It is 2."))
    assert messages == [
        {"role": "user", "content": "compute"},
        {
            "role": "assistant",
            "content": "Let me look.",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "python", "arguments": json.dumps({"code": "1+1"})},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "2"},
        {"role": "assistant", "content": "It is 2."},
    ]
    assert "secret" not in json.dumps(messages)


def test_two_calls_of_a_round_stay_together_and_an_unfinished_call_gets_a_result() -> None:
    messages = fold_run(
        events(
            ("run.started", {"prompt": "two"}),
            ("tool.requested", {"call_id": "a", "name": "python", "arguments": "{bad"}),
            ("tool.requested", {"call_id": "b", "name": "shell", "arguments": {}}),
            ("tool.completed", {"call_id": "a", "name": "python", "ok": False, "output": "err"}),
            ("run.completed", {"reason": "cancelled", "rounds": 1}),
        )
    )
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool"]
    assert [c["id"] for c in messages[1]["tool_calls"]] == ["a", "b"]
    assert messages[1]["tool_calls"][0]["function"]["arguments"] == "{bad"
    assert messages[1]["content"] is None
    assert messages[2]["content"] == "err"
    assert messages[3] == {
        "role": "tool",
        "tool_call_id": "b",
        "content": "[the call did not finish: the run ended cancelled]",
    }


def test_a_run_without_an_answer_gets_a_note_and_the_session_keeps_order() -> None:
    failed = events(
        ("run.started", {"prompt": "first"}),
        ("run.error", {"code": "x", "message": "boom"}),
        ("run.completed", {"reason": "error", "rounds": 0}),
    )
    session = fold_session([failed, a_run("second", "c2", "out", "done")])
    assert session[:2] == [
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "(no answer: the run ended error)"},
    ]
    assert session[2] == {"role": "user", "content": "second"}
    assert transcript_digest(session) == transcript_digest(json.loads(json.dumps(session)))


def test_only_the_new_message_continues_a_session() -> None:
    def request(*messages: tuple[str, str]) -> ChatRequest:
        return ChatRequest.model_validate(
            {"messages": [{"role": r, "content": c} for r, c in messages]}
        )

    assert continues_session(request(("user", "hi")))
    assert continues_session(request(("system", "be brief"), ("user", "hi")))
    assert not continues_session(request(("user", "a"), ("assistant", "b"), ("user", "c")))


def test_system_order_soul_instructions_client_discipline_last() -> None:
    agents = Instruction(path="AGENTS.md", text="Use polars.", sha256="0" * 64)
    text = system_prompt("SOUL", [agents], ["client"], "DISCIPLINE")
    assert text.split("\n\n") == [
        "SOUL",
        "Project instructions (AGENTS.md):\nUse polars.",
        "client",
        "DISCIPLINE",
    ]


def test_windows_per_model_family() -> None:
    assert context_window("gpt-4o-mini") == 128_000
    assert context_window("gpt-4.1-nano") == 1_047_576
    assert context_window("o3-mini") == 200_000
    assert context_window("claude-sonnet-4") == 200_000
    assert context_window("meta/llama3.1:8b") == 128_000
    assert context_window("qwen2.5-coder") == 32_768
    assert context_window("something-else") == 128_000
    assert context_window("gpt-4o", 50_000) == 50_000


def test_calibration_is_bounded() -> None:
    assert calibration(1500, 1000) == 1.5
    assert calibration(100_000, 1000) == 2.0
    assert calibration(10, 1000) == 0.5
    assert calibration(0, 1000, 1.2) == 1.2


def test_pointers_name_artifacts_and_paths() -> None:
    found = pointers("saved art-0123456789abcdef0123 to results/table.csv and ./plot.png; 3.14")
    assert found == ["art-0123456789abcdef0123", "results/table.csv", "./plot.png"]


def long_session(turns: int = 200, output_chars: int = 5000) -> list[dict[str, Any]]:
    runs = []
    for n in range(turns):
        output = f"wrote out/file{n}.csv\n" + "x" * output_chars
        runs.append(a_run(f"question {n}", f"call{n}", output, f"answer {n}"))
    return fold_session(runs)


def pairs_whole(history: list[dict[str, Any]]) -> bool:
    """Every assistant tool call is answered right after it, and no result is orphaned."""
    open_calls: list[str] = []
    for message in history:
        if message["role"] == "tool":
            if message["tool_call_id"] not in open_calls:
                return False
            open_calls.remove(message["tool_call_id"])
        else:
            if open_calls:
                return False
            open_calls = [c["id"] for c in message.get("tool_calls") or []]
    return not open_calls


def test_a_long_session_fits_with_every_pair_whole_and_the_new_message_intact() -> None:
    transcript = long_session()
    window = 8_000
    new = "the latest question " * 50
    request = ChatRequest.model_validate({"messages": [{"role": "user", "content": new}]})
    body, assembly = assemble_chat(
        request,
        run_id="r",
        model="m",
        tools=[],
        discipline="D",
        transcript=transcript,
        window=window,
    )
    assert assembly is not None
    assert body.message == new
    assert assembly.after_tokens <= window - answer_room(window)
    assert estimate(body.system, body.history, body.message) == assembly.after_tokens
    assert pairs_whole(body.history)
    assert body.history[0]["role"] == "user"  # whole turns only
    compacted = assembly.compacted
    assert compacted is not None and compacted["turns"] > 0
    assert compacted["before_tokens"] > compacted["after_tokens"]
    assert "elided" in compacted["summary"] and "dropped" in compacted["summary"]
    elided = [m for m in body.history if m["role"] == "tool"]
    assert elided and all(m["content"].startswith("[output elided: ") for m in elided)
    assert "out/file199.csv" in elided[-1]["content"]
    assert body.history[-1] == {"role": "assistant", "content": "answer 199"}


def test_eliding_alone_is_enough_for_a_middling_session() -> None:
    transcript = long_session(turns=20)
    assembly = fit(transcript, system="S", message="q", window=16_000)
    assert assembly.dropped_turns == 0 and assembly.elided > 0
    assert len(assembly.history) == len(transcript)
    assert assembly.compacted is not None and assembly.compacted["turns"] == 0


def test_a_session_under_budget_is_sent_whole() -> None:
    transcript = long_session(turns=3, output_chars=100)
    assembly = fit(transcript, system="S", message="q", window=128_000)
    assert assembly.history == transcript and assembly.compacted is None


def test_a_stateless_request_uses_exactly_what_it_sent() -> None:
    sent = [
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": "b"},
        {"role": "user", "content": "c"},
    ]
    request = ChatRequest.model_validate({"messages": sent})
    body, assembly = assemble_chat(
        request,
        run_id="r",
        model="m",
        tools=[],
        discipline="D",
        transcript=long_session(turns=2),
    )
    assert assembly is None and body.history == sent[:2] and body.message == "c"
