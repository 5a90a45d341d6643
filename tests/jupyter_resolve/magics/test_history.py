"""``%resolve --new``, ``history`` and ``forget``: parsing, and the transcript's Markdown."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from jupyter_resolve.magics import magics as magics_module
from jupyter_resolve.magics.history import transcript_html, transcript_markdown
from jupyter_resolve.magics.line import parse_options
from jupyter_resolve.magics.magics import ResolveMagics

SCRIPT = "<script>alert(1)</script>"
TRANSCRIPT: dict[str, Any] = {
    "session_id": "session-abc",
    "tokens_estimate": 321,
    "messages": [
        {"role": "user", "content": f"What is 6*7? {SCRIPT}"},
        {
            "role": "assistant",
            "content": "Let me ```run``` it <img src=x onerror=alert(2)>",
            "tool_calls": [
                {
                    "id": "call-1",
                    "type": "function",
                    "function": {"name": "python", "arguments": '{"code": "print(6 * 7)"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call-1", "content": "42\n" + SCRIPT + "x" * 2000},
        {"role": "assistant", "content": "It is **42**. [click](javascript:alert(3))"},
    ],
}


class FakeClient:
    def __init__(self) -> None:
        self.asked: list[str] = []
        self.connection = "fake"

    def get_json(self, path: str, **_: str) -> Any:
        self.asked.append(path)
        return TRANSCRIPT if path.endswith("/transcript") else {}


@pytest.fixture
def magic(monkeypatch: pytest.MonkeyPatch) -> tuple[ResolveMagics, FakeClient, list[Any]]:
    shown: list[Any] = []
    m = ResolveMagics.__new__(ResolveMagics)
    m.shell = SimpleNamespace(user_ns={})
    m.session_id = "session-abc"
    m.last_run_id = None
    m._remote_images = {}
    client = FakeClient()
    monkeypatch.setattr(m, "client", lambda: client)
    monkeypatch.setattr(m, "allow_remote_images", lambda _c: False)
    monkeypatch.setattr(magics_module, "show_markdown", lambda *a: shown.append(a))
    import jupyter_resolve.magics.history as history

    monkeypatch.setattr(history, "show_transcript", lambda answer, **_: shown.append(answer))
    return m, client, shown


def test_new_is_parsed_before_the_prompt() -> None:
    options, rest = parse_options("--new what next?")
    assert options.new and rest == "what next?"
    options, rest = parse_options("--new --soul planner")  # a %%resolve first line
    assert options.new and options.soul == "planner" and rest == ""


def test_history_and_forget_with_words_after_them_are_prompts(
    magic: tuple[ResolveMagics, FakeClient, list[Any]],
) -> None:
    m, client, shown = magic
    assert m._subcommand(["history", "of", "Rome"]) is False
    assert m._subcommand(["forget", "it"]) is False
    assert client.asked == [] and shown == [] and m.session_id == "session-abc"


def test_history_asks_for_this_kernels_session(
    magic: tuple[ResolveMagics, FakeClient, list[Any]],
) -> None:
    m, client, shown = magic
    assert m._subcommand(["history"]) is True
    assert client.asked == ["resolve/api/sessions/session-abc/transcript"]
    assert shown == [TRANSCRIPT] and m.namespace["_resolve_transcript"] == TRANSCRIPT


def test_history_without_a_session_says_so(
    magic: tuple[ResolveMagics, FakeClient, list[Any]],
) -> None:
    m, client, shown = magic
    m.session_id = None
    m._subcommand(["history"])
    assert client.asked == [] and "No session yet" in shown[0][0]


def test_forget_drops_the_session_and_names_the_old_one(
    magic: tuple[ResolveMagics, FakeClient, list[Any]],
) -> None:
    m, _client, shown = magic
    assert m._subcommand(["forget"]) is True
    assert m.session_id is None
    markdown, plain = shown[0]
    assert "session-abc" in markdown and "session-abc stays on the server" in plain


def test_transcript_markdown_lists_turns_calls_and_cut_results() -> None:
    text = transcript_markdown(TRANSCRIPT)
    assert text.startswith("Session ` session-abc `: 4 messages, about 321 tokens")
    assert "**🧑 user**" in text and text.count("**🤖 assistant**") == 2
    assert "**🔧 python** ` call-1 `\n\n```python\nprint(6 * 7)\n```" in text
    assert "**↳ python result** ` call-1 `" in text
    assert "… (" in text and "x" * 2000 not in text  # the result is cut


def test_transcript_html_keeps_payloads_inert() -> None:
    html = transcript_html(TRANSCRIPT)
    lowered = html.lower()
    assert "<script" not in lowered and "onerror" not in lowered
    assert "javascript:" not in lowered
    assert "&lt;script&gt;" in html  # the tool result's payload is shown as text
    assert "print(6 * 7)" in html and "<strong>42</strong>" in html
    # each turn is rendered on its own: the assistant's stray fence does not swallow the rest
    assert html.count("<hr>") == 4
