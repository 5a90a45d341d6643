"""Compaction step 2 (pure, DESIGN 9.1): the oldest turns, dropped to fit the window, are
summarized by the model; the summary then stands in for them in every later request.

This module builds the summarization request from the dropped messages (bounded: the request
must fit the window too, so each message is cut and the oldest text goes first when over), and
the transcript message that carries the summary. The I/O (asking the provider) is the run's.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

Message = dict[str, Any]

# The system text of a summarization request; a provider (the scripted one) may recognize it.
SUMMARY_MARKER = "You compact a conversation for jupyter-resolve."
SUMMARY_SYSTEM = (
    f"{SUMMARY_MARKER} Summarize the earlier turns below so the conversation can go on "
    "without them: what the person asked and wants, facts and numbers they gave, what was "
    "decided, which tools ran and what they found, files and artifact ids named. Keep names, "
    "numbers and paths exact. Write plain text, at most a few short paragraphs. Do not answer "
    "or continue the conversation."
)
SUMMARY_HEADER = "[Summary of the {turns} earlier turn{s} of this session, compacted to fit]"
EXTRACTIVE = "The person asked: "
CONTENT_CUT = 1_200  # characters of one message's text in the summarization request
ARGUMENTS_CUT = 300
TOOL_OUTPUT_CUT = 400


def summary_room(budget: int) -> int:
    """Tokens kept for the summary message in the fitted request (and asked of the model)."""
    return min(1_024, max(128, budget // 16))


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[:limit]} […{len(text) - limit} chars cut]"


def render_turns(messages: Sequence[Message]) -> str:
    """The dropped messages as plain text, one block a message, each cut."""
    lines: list[str] = []
    for message in messages:
        role = str(message.get("role", ""))
        content = message.get("content")
        text = content if isinstance(content, str) else json.dumps(content) if content else ""
        if role == "tool":
            lines.append(f"tool result: {_cut(text, TOOL_OUTPUT_CUT)}")
            continue
        if text:
            lines.append(f"{role}: {_cut(text, CONTENT_CUT)}")
        for call in message.get("tool_calls") or ():
            function = call.get("function") or {}
            arguments = _cut(str(function.get("arguments", "")), ARGUMENTS_CUT)
            lines.append(f"{role} called {function.get('name', '?')}({arguments})")
    return "\n".join(lines)


def summary_request(
    dropped: Sequence[Message], *, model: str, max_chars: int, max_tokens: int
) -> dict[str, Any]:
    """The OpenAI chat body asking the model to summarize ``dropped`` (a previous summary
    among them is summarized again with them). Over ``max_chars`` the oldest text goes: the
    summary of the newest dropped turns matters most."""
    text = render_turns(dropped)
    if len(text) > max_chars:
        text = "[…older text cut]\n" + text[len(text) - max_chars :]
    return {
        "model": model,
        "messages": [
            {"role": "system", "content": SUMMARY_SYSTEM},
            {"role": "user", "content": text},
        ],
        "stream": True,
        "max_tokens": max_tokens,
    }


def is_summary_request(body: dict[str, Any]) -> bool:
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages or not isinstance(messages[0], dict):
        return False
    first = messages[0].get("content")
    return (
        messages[0].get("role") == "system"
        and isinstance(first, str)
        and (first.startswith(SUMMARY_MARKER))
    )


def summary_message(summary: str, turns: int) -> Message:
    """The transcript message that stands in for ``turns`` summarized turns (a user message, so
    it opens the history as any turn does)."""
    header = SUMMARY_HEADER.format(turns=turns, s="s" * (turns != 1))
    return {"role": "user", "content": f"{header}\n{summary.strip()}"}


def extractive_summary(body: dict[str, Any], limit: int = 2_000) -> str:
    """A summary without a model (the offline scripted one): the person's lines, in order."""
    messages = body.get("messages") or []
    text = messages[-1].get("content", "") if messages and isinstance(messages[-1], dict) else ""
    asked: list[str] = []
    for line in str(text).splitlines():
        if line.startswith(EXTRACTIVE):  # an earlier summary of this kind: its requests first
            asked += line[len(EXTRACTIVE) :].split("; ")
        elif line.startswith("user: ") and not line.startswith("user: [Summary of"):
            asked.append(line[len("user: ") :])
    said = "; ".join(a.strip() for a in asked if a.strip()) or "no requests"
    return _cut(f"{EXTRACTIVE}{said}", limit)
