"""The pure parts of the magics: event folding, Markdown, options, interpolation, SSE, env."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError

from jupyter_resolve.contracts.errors import ConnectionMissing
from jupyter_resolve.magics.client import Connection, parse_sse
from jupyter_resolve.magics.line import interpolate, parse_options
from jupyter_resolve.magics.render import MarkdownStream
from jupyter_resolve.magics.run_markdown import card_markdown, to_markdown
from jupyter_resolve.magics.view_model import (
    STATUS_LABELS,
    ResolveResult,
    RunView,
    SteerBlock,
    fold,
)

RUN = "run-1"
# Golden runs recorded from real runs, read by the panel's tests too (tests/labextension).
GOLDEN = Path(__file__).resolve().parents[2] / "fixtures" / "runs"
EXPECTED: dict[str, Any] = json.loads((GOLDEN / "expected.json").read_text(encoding="utf-8"))


def ev(seq: int, kind: str, **data: Any) -> dict[str, Any]:
    return {"seq": seq, "type": kind, "data": {"run_id": RUN, **data}}


def tool_run() -> list[dict[str, Any]]:
    return [
        ev(1, "run.started", session_id="s-1", soul=None, model="scripted", budget={"rounds": 8}),
        ev(2, "reasoning.delta", text="let me "),
        ev(3, "reasoning.delta", text="look"),
        ev(4, "text.delta", text="I will "),
        ev(5, "text.delta", text="run it."),
        ev(6, "tool.requested", call_id="c1", name="python", arguments={"code": "print(6*7)"}),
        ev(7, "tool.started", call_id="c1", name="python"),
        ev(
            8,
            "tool.completed",
            call_id="c1",
            name="python",
            ok=True,
            output="42",
            mime={"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"},
            truncated=False,
            ms=12,
        ),
        ev(9, "usage", prompt_tokens=100, completion_tokens=20),
        ev(10, "text.delta", text="It printed 42."),
        ev(11, "usage", prompt_tokens=150, completion_tokens=10),
        ev(12, "run.completed", reason="stop", rounds=2),
    ]


def test_fold_tool_run() -> None:
    view = fold(tool_run())
    assert (view.run_id, view.session_id, view.model, view.budget) == (RUN, "s-1", "scripted", 8)
    assert view.reasoning == "let me look"
    assert view.text == "I will run it.It printed 42."
    assert view.answer() == "I will run it.\n\nIt printed 42."
    card = view.tools["c1"]
    assert (card.name, card.status, card.output, card.ms) == ("python", "done", "42", 12)
    assert card.arguments_text() == "print(6*7)"
    assert list(card.images) == ["image/png"]
    assert [type(b).__name__ for b in view.blocks] == ["TextBlock", "ToolCard", "TextBlock"]
    assert view.tokens == 280 and view.rounds == 2 and view.reason == "stop"
    assert view.footer_text(1.25) == "2 of 8 rounds · 280 tokens · 1 tool call · 1.2 s · stop"
    assert view.empty_summary_text() is None


def test_apply_says_what_changed() -> None:
    view = RunView()
    parts = [view.apply(e) for e in tool_run()]
    assert parts[0] == ("header", "")
    assert parts[3] == ("text", "0") and parts[9] == ("text", "2")
    assert parts[5] == ("tool", "c1")
    assert parts[-1] == ("footer", "")


def test_approval_states_and_interrupted_calls() -> None:
    events = [
        ev(1, "run.started", session_id="s", model="m", budget={"rounds": 3}),
        ev(2, "tool.requested", call_id="c1", name="shell", arguments={"command": "ls"}),
        ev(3, "tool.approval", call_id="c1", name="shell", arguments={}, state="waiting"),
    ]
    view = fold(events)
    assert view.tools["c1"].waiting
    assert view.tools["c1"].arguments == {"command": "ls"}  # the request's arguments are kept
    view.apply(ev(4, "tool.approval", call_id="c1", name="shell", arguments={}, state="denied"))
    assert view.tools["c1"].status == "denied"
    view.apply(ev(5, "tool.requested", call_id="c2", name="python", arguments={"code": "1"}))
    view.apply(ev(6, "tool.started", call_id="c2", name="python"))
    view.apply(ev(7, "tool.approval", call_id="c3", name="shell", arguments={}, state="waiting"))
    view.apply(ev(8, "run.completed", reason="cancelled", rounds=1))
    # cut off by the cancel: the running call and the one still waiting for a person
    assert view.tools["c2"].status == "cancelled" and view.tools["c3"].status == "cancelled"
    assert view.tools["c1"].status == "denied"
    assert [c.label for c in view.tools.values()] == ["denied", "cancelled", "cancelled"]


def golden(name: str) -> list[dict[str, Any]]:
    lines = (GOLDEN / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def test_every_golden_run_has_expectations_and_one_vocabulary() -> None:
    assert sorted(p.stem for p in GOLDEN.glob("*.jsonl")) == sorted(EXPECTED["runs"])
    assert STATUS_LABELS == EXPECTED["labels"]


@pytest.mark.parametrize("name", sorted(EXPECTED["runs"]))
def test_golden_run_folds_into_the_shared_statuses_and_words(name: str) -> None:
    view = fold(golden(name))
    folded = {
        "reason": view.reason,
        "summary": view.empty_summary_text(),
        "errors": view.errors,
        "rounds": view.rounds,
        "budget": view.budget,
        "tokens": view.tokens,
        "calls": {
            c.call_id: {"name": c.name, "status": c.status, "label": c.label}
            for c in view.tools.values()
        },
        "messages": [b.message for b in view.blocks if isinstance(b, SteerBlock)],
    }
    assert folded == EXPECTED["runs"][name]
    # and those are the words the cell shows
    for card in view.tools.values():
        assert card_markdown(card).startswith(f"**🔧 {card.name}** — {card.label}")
    summary = view.empty_summary_text()
    assert summary is None or f"**No answer.** {summary}" in to_markdown(view)


def test_empty_run_summary_is_shown() -> None:
    summary = {"text": "No answer (budget) after 3 of 3 rounds. Tool calls: read_file ×3."}
    events = [
        ev(1, "run.started", session_id="s", model="m", budget={"rounds": 3}),
        ev(2, "run.error", code="provider_error", message="boom"),
        ev(3, "run.completed", reason="budget", rounds=3, summary=summary),
    ]
    view = fold(events)
    assert view.errors == ["provider_error: boom"]
    assert view.empty_summary_text() == summary["text"]
    markdown = to_markdown(view)
    assert "**No answer.** No answer (budget)" in markdown
    assert "**error** provider_error: boom" in markdown
    assert fold(events[:1] + events[2:]).empty_summary_text() == summary["text"]
    bare = fold([ev(1, "run.completed", reason="error", rounds=0)])
    assert bare.empty_summary_text() == "No answer (error)."


def test_markdown_transcript_keeps_order_and_images() -> None:
    view = fold(tool_run())
    markdown = to_markdown(view, elapsed=2.0)
    assert markdown.index("I will run it.") < markdown.index("**🔧 python**")
    assert markdown.index("**🔧 python**") < markdown.index("It printed 42.")
    assert "```python\nprint(6*7)\n```" in markdown
    assert "> let me look" in markdown
    assert "[image/png output: shown in notebooks]" in markdown
    inline = to_markdown(view, inline_images=True)
    assert "![python output](data:image/png;base64,iVBORw0KGgo=)" in inline
    assert markdown.rstrip().endswith("*2 of 8 rounds · 280 tokens · 1 tool call · 2.0 s · stop*")


def test_fences_survive_backticks_in_output() -> None:
    events = [
        ev(1, "tool.requested", call_id="c", name="read_file", arguments={"path": "a.md"}),
        ev(2, "tool.completed", call_id="c", name="read_file", ok=True, output="```x```", ms=1),
    ]
    assert "````\n```x```\n````" in to_markdown(fold(events))


def test_result_object() -> None:
    result = ResolveResult.of(fold(tool_run()))
    assert result.text == "I will run it.\n\nIt printed 42."
    assert result.run_id == RUN and result.session_id == "s-1" and result.reason == "stop"
    assert result.tool_calls[0]["name"] == "python" and result.tool_calls[0]["ok"] is True
    assert len(result.events) == 12
    assert "1 tool call" in repr(result)


def test_markdown_stream_prints_incrementally() -> None:
    printed: list[str] = []
    stream = MarkdownStream(write=printed.append)
    view = RunView()
    for event in tool_run():
        part, key = view.apply(event)
        stream.update(view, part, key)
    stream.finish(view, 0.5)
    out = "".join(printed)
    assert out.count("I will run it.") == 1
    assert "**🔧 python**\n```python\nprint(6*7)\n```\n→ done in 12 ms\n```\n42\n```\n" in out
    assert "It printed 42." in out
    assert out.rstrip().endswith("0.5 s · stop*")


def test_markdown_stream_asks_for_approval() -> None:
    decisions: list[tuple[str, str]] = []
    printed: list[str] = []

    def decide(call_id: str, decision: str) -> str | None:
        decisions.append((call_id, decision))
        return None

    stream = MarkdownStream(write=printed.append, decide=decide, ask=lambda _prompt: "y")
    view = RunView()
    for event in [
        ev(1, "tool.requested", call_id="c1", name="shell", arguments={"command": "ls"}),
        ev(2, "tool.approval", call_id="c1", name="shell", arguments={}, state="waiting"),
    ]:
        stream.update(view, *view.apply(event))
    assert decisions == [("c1", "approve")]

    def no_stdin(_prompt: str) -> str:
        raise EOFError

    stream = MarkdownStream(write=printed.append, decide=decide, ask=no_stdin)
    view = RunView()
    for event in [
        ev(1, "tool.requested", call_id="c2", name="shell", arguments={}),
        ev(2, "tool.approval", call_id="c2", name="shell", arguments={}, state="waiting"),
    ]:
        stream.update(view, *view.apply(event))
    assert decisions == [("c1", "approve")]
    assert "cannot ask here" in "".join(printed)


def test_parse_options() -> None:
    options, rest = parse_options("--soul planner --session s-1 --new --model m --task")
    assert (options.soul, options.session, options.new, options.model, options.task) == (
        "planner",
        "s-1",
        True,
        "m",
        True,
    )
    assert rest == ""
    options, rest = parse_options("--no-interpolate --model=gpt  what is {x}?")
    assert not options.interpolate and options.model == "gpt" and rest == "what is {x}?"
    assert parse_options("plain --new words")[1] == "plain --new words"
    with pytest.raises(UsageError, match="unknown option --bogus"):
        parse_options("--bogus")
    with pytest.raises(UsageError, match="--soul needs a value"):
        parse_options("--soul")


def test_interpolate() -> None:
    class Obj:
        name = "cells"

    ns = {"x": 6, "obj": Obj(), "df": "frame"}
    assert interpolate("{x} times 7", ns) == "6 times 7"
    assert interpolate("{obj.name} and {obj.missing}", ns) == "cells and {obj.missing}"
    assert interpolate("{{x}} stays", ns) == "{x} stays"
    assert interpolate("{y} {x + 1} {'a': 1}", ns) == "{y} {x + 1} {'a': 1}"
    assert interpolate('f"{df}"', ns) == 'f"frame"'


def test_parse_sse() -> None:
    stream = (
        ': keep-alive\n\nid: 1\nevent: run.started\ndata: {"run_id":"r"}\n\n'
        'id: 2\r\nevent: text.delta\r\ndata:{"text":"a\u2028b\x85c\u2029d é"}\r\n\r\n'
    ).encode()
    expected = [
        {"seq": 1, "type": "run.started", "data": {"run_id": "r"}},
        {"seq": 2, "type": "text.delta", "data": {"text": "a\u2028b\x85c\u2029d é"}},
    ]
    assert list(parse_sse([stream])) == expected
    # any split of the bytes, even inside a character, gives the same events
    assert list(parse_sse(stream[i : i + 1] for i in range(len(stream)))) == expected


def test_connection_from_env() -> None:
    connection = Connection.from_env(
        {"JUPYTER_RESOLVE_URL": "http://h:1/base", "JUPYTER_RESOLVE_TOKEN": "t"}
    )
    assert connection == Connection("http://h:1/base/", "t")
    with pytest.raises(ConnectionMissing) as missing:
        Connection.from_env({})
    assert "set JUPYTER_RESOLVE_URL and JUPYTER_RESOLVE_TOKEN" in missing.value.message
    with pytest.raises(ConnectionMissing, match="set JUPYTER_RESOLVE_TOKEN in"):
        Connection.from_env({"JUPYTER_RESOLVE_URL": "http://h:1/"})
    hub = Connection.from_env(
        {
            "JUPYTERHUB_SERVICE_URL": "http://127.0.0.1:39999/user/ada/",
            "JUPYTERHUB_SERVICE_PREFIX": "/user/ada/",
            "JUPYTERHUB_API_TOKEN": "hub",
        }
    )
    assert hub == Connection("http://127.0.0.1:39999/user/ada/", "hub")


def test_fold_a_task_stream() -> None:
    def child(seq: int, kind: str, run_id: str, role: str, **data: Any) -> dict[str, Any]:
        return {"seq": seq, "type": kind, "data": {"run_id": run_id, "role": role, **data}}

    events = [
        {"seq": 1, "type": "task.started", "data": {"task_id": "task-1", "session_id": "s"}},
        child(2, "run.started", "r1", "planner", model="scripted", budget={"rounds": 8}),
        child(3, "text.delta", "r1", "planner", text="1. look"),
        child(4, "run.completed", "r1", "planner", reason="stop", rounds=1),
        child(5, "run.started", "r2", "specialist", model="scripted", budget={"rounds": 8}),
        child(6, "tool.requested", "r2", "specialist", call_id="c", name="python", arguments={}),
        child(7, "text.delta", "r2", "specialist", text="found it"),
        child(8, "run.completed", "r2", "specialist", reason="stop", rounds=2),
        {"seq": 9, "type": "task.completed", "data": {"task_id": "task-1", "reason": "stop"}},
    ]
    view = RunView()
    parts = [view.apply(e) for e in events]
    assert parts[1] == ("text", "0")  # a heading per role
    assert not view.completed or view.reason == "stop"
    assert view.reason == "stop" and view.rounds == 3
    assert view.answer() == "**planner**\n\n1. look\n\n**specialist**\n\nfound it"
    assert ResolveResult.of(view).run_id == "task-1"
    assert len(view.events) == 9


def test_a_compaction_is_a_quiet_footer_note() -> None:
    view = fold(
        [
            ev(1, "run.started", session_id="s", model="m", budget={"rounds": 8}),
            ev(2, "context.compacted", before_tokens=9, after_tokens=3, turns=1, summary="dropped"),
            ev(3, "text.delta", text="hi"),
            ev(4, "run.completed", reason="stop", rounds=1),
        ]
    )
    assert view.answer() == "hi" and view.errors == []
    assert view.footer_text().endswith("stop · context: dropped")
    # a model's summary is long: the footer shows the note, not the summary
    summarized = fold(
        [
            ev(1, "run.started", session_id="s", model="m", budget={"rounds": 8}),
            ev(2, "context.compacted", turns=3, note="dropped 3; 3 summarized", summary="S " * 500),
            ev(3, "run.completed", reason="stop", rounds=1),
        ]
    )
    assert summarized.footer_text().endswith("context: dropped 3; 3 summarized")


@pytest.mark.parametrize("name", sorted(EXPECTED["proposals"]))
def test_golden_proposals_fold_into_their_decisions(name: str) -> None:
    view = fold(golden(name))
    folded = {
        p.proposal_id: {
            "call_id": p.call_id,
            "decision": p.decision,
            "by": p.by,
            "edited": p.edited,
            "ran": p.ran,
            "reason": p.reason,
        }
        for p in view.proposals.values()
    }
    assert folded == EXPECTED["proposals"][name]
    [proposal] = view.proposals.values()
    assert proposal.cells[0]["source"].startswith("y = x * 14")
    assert "+y = x * 14" in proposal.diff() and proposal.code() == proposal.cells[0]["source"]


def test_the_footer_shows_cached_tokens_and_cost() -> None:
    usage = {"prompt_tokens": 1000, "completion_tokens": 10, "cache_write_tokens": 0}
    view = fold(
        [
            ev(1, "run.started", session_id="s", model="m", budget={"rounds": 8}),
            ev(2, "usage", **usage, cached_tokens=900, cost=0.0012),
            ev(3, "usage", **{**usage, "cache_write_tokens": 50}, cached_tokens=0, cost=0.003),
            ev(4, "text.delta", text="hi"),
            ev(5, "run.completed", reason="stop", rounds=2),
        ]
    )
    footer = view.footer_text()
    assert "2,020 tokens (900 cached, 50 written to cache) · $0.0042" in footer
    # a model without prices: no cost shown
    plain = fold([ev(1, "usage", prompt_tokens=5, completion_tokens=1)])
    assert "$" not in plain.footer_text() and "cached" not in plain.footer_text()
