"""An external agent's ``session/update`` notifications as this project's normalized events
(DESIGN 3.6, 10.4). Pure: wire JSON in (the ACP schema's camelCase), events out; no I/O, no SDK.

- ``agent_message_chunk`` → ``text.delta``; ``agent_thought_chunk`` → ``reasoning.delta``;
- ``tool_call`` / ``tool_call_update`` → ``tool.requested`` (first sight of a call), then
  ``tool.started`` (``in_progress``, or on its end if never seen running) and ``tool.completed``
  (``completed`` or ``failed``). A call's ``name`` is its ACP ``kind`` (``read``, ``edit``,
  ``execute``, ... ``other``); ``title``, ``kind``, ``locations`` and ``content`` (diffs
  included) are kept on the events, and ``output`` is the content as text (a diff as a unified
  diff);
- ``plan`` → a ``reasoning.delta`` that shows the plan as a checklist, with the entries as
  ``plan``; ``usage_update`` → a ``usage`` event with no tokens of its own and the context's
  ``context_tokens`` / ``context_window``; the prompt's answer's ``usage`` → ``usage``;
- ``user_message_chunk`` (an agent replaying a loaded session) and the session's modes,
  commands and config are not run events: dropped.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..contracts.bodies import CompletionReason, EventType

Emitted = tuple[EventType, dict[str, Any]]

OUTPUT_LIMIT = 20_000  # a tool's output, as for the gateway's own tools (DESIGN 3.3)
CONTENT_LIMIT = 200_000  # characters of a call's ACP content kept on tool.completed
_CALL_ID = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9._:-]{0,199}\Z")
ENDED = ("completed", "failed")


def call_id_of(tool_call_id: str) -> str:
    """The normalized ``call_id`` of an ACP ``toolCallId``: itself when it can name an
    approval in a URL, else a digest of it (stable, so every update finds the same call)."""
    if _CALL_ID.match(tool_call_id):
        return tool_call_id
    return "acp-" + hashlib.sha256(tool_call_id.encode("utf-8")).hexdigest()[:24]


def cut(text: str, limit: int = OUTPUT_LIMIT) -> tuple[str, bool]:
    if len(text) <= limit:
        return text, False
    return f"{text[:limit]}\n[output truncated: {limit} of {len(text)} characters shown]", True


def block_text(block: Mapping[str, Any]) -> str:
    """A content block as text: text as is, a link or resource by its name or URI, media by
    their type (their bytes are not text)."""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind == "resource_link":
        return (
            f"[{block.get('title') or block.get('name') or block.get('uri')}]({block.get('uri')})"
        )
    if kind == "resource":
        resource = block.get("resource") or {}
        text = resource.get("text")
        return str(text) if isinstance(text, str) else f"[resource {resource.get('uri', '')}]"
    return f"[{kind}: {block.get('mimeType', 'unknown type')}]"


def diff_text(item: Mapping[str, Any]) -> str:
    """A ``diff`` content item as a unified diff (a new file: every line added)."""
    path = str(item.get("path", ""))
    old = item.get("oldText")
    new = str(item.get("newText", ""))
    before = [] if old is None else str(old).splitlines(keepends=True)
    after = new.splitlines(keepends=True)
    lines = difflib.unified_diff(
        before, after, "/dev/null" if old is None else path, path, lineterm="\n"
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def content_text(content: Sequence[Mapping[str, Any]]) -> str:
    parts = []
    for item in content:
        kind = item.get("type")
        if kind == "diff":
            parts.append(diff_text(item))
        elif kind == "terminal":
            parts.append(f"[terminal {item.get('terminalId', '')}]")
        elif kind == "content":
            parts.append(block_text(item.get("content") or {}))
    return "\n".join(p for p in parts if p)


@dataclass
class Call:
    """What the updates said of one tool call so far."""

    call_id: str
    title: str = ""
    kind: str = "other"
    arguments: dict[str, Any] = field(default_factory=dict)
    content: list[dict[str, Any]] = field(default_factory=list)
    locations: list[dict[str, Any]] = field(default_factory=list)
    raw_output: Any = None
    status: str = "pending"
    started_at: float | None = None
    completed: bool = False

    @property
    def name(self) -> str:
        return self.kind or "other"

    def merge(self, update: Mapping[str, Any]) -> None:
        if isinstance(update.get("title"), str):
            self.title = update["title"]
        if isinstance(update.get("kind"), str):
            self.kind = update["kind"]
        if "rawInput" in update and update["rawInput"] is not None:
            raw = update["rawInput"]
            self.arguments = dict(raw) if isinstance(raw, Mapping) else {"input": raw}
        if isinstance(update.get("content"), list):
            self.content = [dict(c) for c in update["content"] if isinstance(c, Mapping)]
        if isinstance(update.get("locations"), list):
            self.locations = [dict(c) for c in update["locations"] if isinstance(c, Mapping)]
        if update.get("rawOutput") is not None:
            self.raw_output = update["rawOutput"]
        if isinstance(update.get("status"), str):
            self.status = update["status"]

    def described(self) -> dict[str, Any]:
        return {"call_id": self.call_id, "name": self.name, "title": self.title, "kind": self.kind}

    def requested(self) -> dict[str, Any]:
        return {**self.described(), "arguments": self.arguments}

    def completion(self, now: float) -> dict[str, Any]:
        text = content_text(self.content)
        if not text and self.raw_output is not None:
            raw = self.raw_output
            text = raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False)
        output, truncated = cut(text)
        started = self.started_at if self.started_at is not None else now
        data: dict[str, Any] = {
            **self.described(),
            "ok": self.status == "completed",
            "output": output,
            "mime": None,
            "truncated": truncated,
            "ms": max(0, int((now - started) * 1000)),
        }
        if self.locations:
            data["locations"] = self.locations
        if self.content and len(json.dumps(self.content, ensure_ascii=False)) <= CONTENT_LIMIT:
            data["content"] = self.content  # the diffs themselves, for clients to show
        return data


class UpdateTranslator:
    """One prompt turn's updates → events; keeps the turn's tool calls (pure, stateful)."""

    def __init__(self) -> None:
        self.calls: dict[str, Call] = {}

    def translate(self, update: Mapping[str, Any], now: float) -> list[Emitted]:
        kind = update.get("sessionUpdate")
        if kind in ("agent_message_chunk", "agent_thought_chunk"):
            text = block_text(update.get("content") or {})
            if not text:
                return []
            return [
                (
                    "text.delta" if kind == "agent_message_chunk" else "reasoning.delta",
                    {"text": text},
                )
            ]
        if kind in ("tool_call", "tool_call_update"):
            return self.tool_update(update, now)
        if kind == "plan":
            return [plan_event(update.get("entries") or [])]
        if kind == "usage_update":
            return [context_usage(update)]
        return []

    def tool_update(self, update: Mapping[str, Any], now: float) -> list[Emitted]:
        """A ``tool_call``, a ``tool_call_update``, or the ``toolCall`` of a permission
        request: the events it adds."""
        call_id = call_id_of(str(update.get("toolCallId", "")))
        call = self.calls.get(call_id)
        emitted: list[Emitted] = []
        if call is None:
            call = self.calls[call_id] = Call(call_id)
            call.merge(update)
            emitted.append(("tool.requested", call.requested()))
        else:
            if call.completed:
                return []
            call.merge(update)
        if call.status in ("in_progress", *ENDED) and call.started_at is None:
            call.started_at = now
            emitted.append(("tool.started", {"call_id": call.call_id, "name": call.name}))
        if call.status in ENDED:
            call.completed = True
            emitted.append(("tool.completed", call.completion(now)))
        return emitted


def plan_event(entries: Sequence[Mapping[str, Any]]) -> Emitted:
    marks = {"completed": "x", "in_progress": " "}
    lines = [
        f"- [{marks.get(str(e.get('status')), ' ')}] {e.get('content', '')}"
        + (" (in progress)" if e.get("status") == "in_progress" else "")
        for e in entries
    ]
    text = "Plan:\n" + "\n".join(lines) + "\n"
    return ("reasoning.delta", {"text": text, "plan": [dict(e) for e in entries]})


def context_usage(update: Mapping[str, Any]) -> Emitted:
    data: dict[str, Any] = {
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "context_tokens": update.get("used"),
        "context_window": update.get("size"),
    }
    cost = update.get("cost")
    if isinstance(cost, Mapping):  # the session's cost so far, in the agent's currency
        data["agent_cost"] = {"amount": cost.get("amount"), "currency": cost.get("currency")}
    return ("usage", data)


def prompt_usage(usage: Mapping[str, Any] | None) -> Emitted | None:
    """The ``usage`` of a ``session/prompt`` answer (the turn's tokens)."""
    if not usage:
        return None
    data: dict[str, Any] = {
        "prompt_tokens": int(usage.get("inputTokens") or 0),
        "completion_tokens": int(usage.get("outputTokens") or 0),
    }
    for wire, name in (
        ("cachedReadTokens", "cached_tokens"),
        ("cachedWriteTokens", "cache_write_tokens"),
        ("thoughtTokens", "reasoning_tokens"),
    ):
        if usage.get(wire) is not None:
            data[name] = int(usage[wire])
    return ("usage", data)


def choose_option(options: Sequence[Mapping[str, Any]], answer: str, always: bool) -> str | None:
    """The ``optionId`` of a permission request's options that a person's ``approve`` or
    ``deny`` (``always``: for good) stands for, the other duration when the agent offers only
    that; None when no option fits (then the request is answered ``cancelled``)."""
    verb = "allow" if answer == "approve" else "reject"
    order = ("always", "once") if always else ("once", "always")
    for duration in order:
        for option in options:
            if option.get("kind") == f"{verb}_{duration}":
                return str(option.get("optionId") or option.get("option_id"))
    return None


def completion_of(stop_reason: str) -> tuple[CompletionReason, Emitted | None]:
    """A prompt's ``stopReason`` as the run's reason, and the ``run.error`` it implies."""
    if stop_reason == "end_turn":
        return "stop", None
    if stop_reason == "cancelled":
        return "cancelled", None
    if stop_reason in ("max_tokens", "max_turn_requests"):
        limit = "tokens" if stop_reason == "max_tokens" else "turn requests"
        message = f"the agent stopped: it reached its own limit of {limit} ({stop_reason})"
        return "budget", ("run.error", {"code": "agent_budget", "message": message})
    message = f"the agent refused to go on (stopReason '{stop_reason[:40]}')"
    return "error", ("run.error", {"code": "agent_refused", "message": message})
