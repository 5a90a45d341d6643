"""The event → view model (pure): folds a run's normalized events (DESIGN 3.6) into what a view
shows — the answer text, the reasoning, a card per tool call, a footer and the empty-run summary.

The widget view and the Markdown renderer both read this; neither interprets events itself.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from .live_output import LiveOutput
from .proposal_view import ProposalCard, fold_proposal

# "output": a running call's live output grew (``tool.output``); "tool": anything else of a card
Part = Literal["header", "text", "reasoning", "tool", "output", "error", "footer"]
IMAGE_TYPES = ("image/png", "image/jpeg", "image/svg+xml")

# Where a tool call stands, and the words shown for it: the same table as the panel's
# (labextension/src/run.ts); tests/fixtures/runs/expected.json holds both clients to it.
STATUS_LABELS = {
    "requested": "requested",
    "waiting": "waiting for approval",
    "approved": "approved",
    "running": "running…",
    "done": "done",
    "error": "failed",
    "denied": "denied",
    "cancelled": "cancelled",
    "interrupted": "interrupted",
}
OPEN = ("requested", "waiting", "approved", "running")
# A run stopped on purpose (a person's cancel, a used-up budget) cancels the calls it cut off;
# one that ended any other way (the runtime died, the server stopped) interrupted them.
CANCELLING = ("cancelled", "budget")


def close_status(reason: str) -> str:
    """What a call still open when its run ended ``reason`` becomes."""
    return "cancelled" if reason in CANCELLING else "interrupted"


@dataclass
class ToolCard:
    """One tool call as a card: name, arguments, status, output, images; while it runs, what
    it printed or displayed so far (``live``), which its result replaces (``has_result``)."""

    call_id: str
    name: str
    arguments: Any = None
    status: str = "requested"  # a key of STATUS_LABELS
    output: str = ""
    mime: dict[str, Any] = field(default_factory=dict)
    truncated: bool = False
    ms: int | None = None
    live: LiveOutput = field(default_factory=LiveOutput)
    has_result: bool = False  # tool.completed came: its whole result replaces the live output

    @property
    def waiting(self) -> bool:
        return self.status == "waiting"

    @property
    def finished(self) -> bool:
        return self.status not in OPEN

    @property
    def label(self) -> str:
        return STATUS_LABELS.get(self.status, self.status)

    @property
    def images(self) -> dict[str, Any]:
        return {m: self.mime[m] for m in IMAGE_TYPES if m in self.mime}

    def arguments_text(self) -> str:
        """``python`` code as is, other arguments as indented JSON."""
        args = self.arguments
        if isinstance(args, dict) and self.name == "python" and isinstance(args.get("code"), str):
            return str(args["code"])
        if isinstance(args, str):
            return args
        return json.dumps(args, indent=2, ensure_ascii=False)

    def status_text(self) -> str:
        """The label, with the time taken once the call ran (``done in 12 ms``)."""
        ran = self.status in ("done", "error") and self.ms is not None
        return f"{self.label} in {self.ms} ms" if ran else self.label

    def as_dict(self) -> dict[str, Any]:
        return {
            "call_id": self.call_id,
            "name": self.name,
            "arguments": self.arguments,
            "status": self.status,
            "ok": {"done": True, "error": False, "denied": False}.get(self.status),
            "output": self.output,
            "mime": self.mime or None,
            "truncated": self.truncated,
            "ms": self.ms,
        }


@dataclass
class TextBlock:
    """A stretch of answer text between tool calls."""

    text: str = ""


@dataclass
class SteerBlock(TextBlock):
    """A person's message where it reached the model (``run.message``): Markdown every view
    shows as it shows text, not part of the answer; ``message`` as they wrote it."""

    message: str = ""


@dataclass
class RunView:
    """Everything a view of one run shows, folded from its events."""

    run_id: str = ""
    task_id: str = ""  # set when the events are a task's (child runs tagged with a role)
    role: str | None = None
    session_id: str = ""
    model: str = ""
    soul: str | None = None
    budget: int | None = None
    text: str = ""
    reasoning: str = ""
    tools: dict[str, ToolCard] = field(default_factory=dict)
    blocks: list[TextBlock | ToolCard] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0  # prompt tokens read from the provider's cache
    cache_write_tokens: int = 0
    cost: float | None = None  # USD, when the model's prices are known
    usage_events: int = 0
    rounds: int | None = None
    reason: str | None = None
    summary: dict[str, Any] | None = None
    compacted: str | None = None  # what context.compacted said (a quiet footer note)
    estimated: bool = False  # some usage was counted by the gateway, not the provider: "≈"
    writing: tuple[str, int] | None = None  # a call being written (tool.writing): name, ≈ tokens
    events: list[dict[str, Any]] = field(default_factory=list)
    proposals: dict[str, ProposalCard] = field(default_factory=dict)  # notebook_propose's

    @property
    def completed(self) -> bool:
        return self.reason is not None

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def answer(self) -> str:
        """The answer text: the text blocks, a blank line where tool calls came between."""
        texts = [b.text.strip() for b in self.blocks if type(b) is TextBlock]
        return "\n\n".join(t for t in texts if t)

    def card(self, call_id: str, name: str = "") -> ToolCard:
        card = self.tools.get(call_id)
        if card is None:
            card = self.tools[call_id] = ToolCard(call_id=call_id, name=name)
            self.blocks.append(card)
        elif name and not card.name:
            card.name = name
        return card

    def apply(self, event: dict[str, Any]) -> tuple[Part, str]:
        """Fold one event in; say which part changed (and the call id for a tool part)."""
        self.events.append(event)
        kind = event.get("type", "")
        data: dict[str, Any] = event.get("data") or {}
        if self.task_id:
            return self._apply_task(kind, data)
        return self._fold(kind, data)

    def _fold(self, kind: str, data: dict[str, Any]) -> tuple[Part, str]:
        if kind == "task.started":
            self.task_id = str(data.get("task_id", ""))
            self.session_id = str(data.get("session_id", ""))
            return "header", ""
        if kind == "run.started":
            self.run_id = str(data.get("run_id", ""))
            self.session_id = str(data.get("session_id", ""))
            self.model = str(data.get("model", ""))
            self.soul = data.get("soul")
            budget = data.get("budget")
            if isinstance(budget, dict) and isinstance(budget.get("rounds"), int):
                self.budget = budget["rounds"]
            return "header", ""
        if kind == "text.delta":
            piece = str(data.get("text", ""))
            self.text += piece
            if not self.blocks or type(self.blocks[-1]) is not TextBlock:
                self.blocks.append(TextBlock())
            block = self.blocks[-1]
            assert isinstance(block, TextBlock)
            block.text += piece
            return "text", str(len(self.blocks) - 1)
        if kind == "run.message":
            said = str(data.get("text", ""))
            quoted = "".join(f"> {line}\n" for line in said.splitlines())
            self.blocks.append(SteerBlock(f"> **↪ you, at this step:**\n{quoted}\n", said))
            return "text", str(len(self.blocks) - 1)
        if kind == "reasoning.delta":
            self.reasoning += str(data.get("text", ""))
            return "reasoning", ""
        if kind == "tool.writing":
            self.writing = (str(data.get("name") or "tool"), int(data.get("tokens") or 0))
            return "footer", ""
        if kind == "tool.output":
            call_id = str(data.get("call_id", ""))
            self.card(call_id, str(data.get("name", ""))).live.add(data)
            return "output", call_id
        if kind.startswith("tool."):
            self.writing = None  # the call is written: its card shows it
            return "tool", self._apply_tool(kind, data)
        if kind.startswith("notebook."):
            call_id = fold_proposal(self.card, self.proposals, kind, data)
            return ("tool", call_id) if call_id else ("footer", "")
        if kind == "usage":
            self.usage_events += 1
            self.prompt_tokens += int(data.get("prompt_tokens") or 0)
            self.completion_tokens += int(data.get("completion_tokens") or 0)
            self.cached_tokens += int(data.get("cached_tokens") or 0)
            self.cache_write_tokens += int(data.get("cache_write_tokens") or 0)
            self.estimated = self.estimated or data.get("estimated") is True
            if isinstance(cost := data.get("cost"), (int, float)):
                self.cost = (self.cost or 0.0) + float(cost)
            return "footer", ""
        if kind == "run.error":
            code, message = data.get("code"), str(data.get("message", ""))
            self.errors.append(f"{code}: {message}" if code else message)
            return "error", ""
        if kind == "run.completed":
            self.writing = None
            self.reason = str(data.get("reason", "stop"))
            rounds = data.get("rounds")
            self.rounds = rounds if isinstance(rounds, int) else None
            summary = data.get("summary")
            if isinstance(summary, str):  # as the panel reads it too
                summary = {"text": summary}
            self.summary = summary if isinstance(summary, dict) else None
            self._close_calls(self.reason)
            self._undelivered(data)
            return "footer", ""
        if kind == "context.compacted":
            self.compacted = str(data.get("note") or data.get("summary") or "context compacted")
            return "footer", ""
        return "footer", ""

    def _undelivered(self, data: dict[str, Any]) -> None:
        """Steering messages the run ended before reading (``undelivered_messages``)."""
        if isinstance(left := data.get("undelivered_messages"), list) and left:
            why = f"the run ended ({data.get('reason', '?')}) before its next step"
            self.errors.append(f"{len(left)} message(s) you sent did not reach the agent: {why}")

    def _close_calls(self, reason: str) -> None:
        for card in self.tools.values():
            if not card.finished:
                card.status = close_status(reason)

    def _apply_task(self, kind: str, data: dict[str, Any]) -> tuple[Part, str]:
        """A task's stream: child runs in turn, each event tagged with its role."""
        role = data.get("role")
        if kind == "run.started":
            self.role = str(role) if role else None
            self.run_id = str(data.get("run_id", ""))
            self.model = str(data.get("model", self.model))
            self.soul = self.role
            budget = data.get("budget")
            if isinstance(budget, dict) and isinstance(budget.get("rounds"), int):
                self.budget = (self.budget or 0) + budget["rounds"] or None
            self.blocks.append(TextBlock(f"**{self.role or 'agent'}**\n\n"))
            return "text", str(len(self.blocks) - 1)
        if kind == "run.completed":
            # A step ended: its calls still open end with it; the task goes on.
            rounds = data.get("rounds")
            self.rounds = (self.rounds or 0) + (rounds if isinstance(rounds, int) else 0)
            summary = data.get("summary")
            if isinstance(summary, dict) and summary.get("text"):
                self.summary = summary
            self._close_calls(str(data.get("reason", "")))
            self._undelivered(data)
            return "footer", ""
        if kind == "task.completed":
            self.reason = str(data.get("reason", "stop"))
            self._close_calls(self.reason)
            return "footer", ""
        return self._fold(kind, data)

    def _apply_tool(self, kind: str, data: dict[str, Any]) -> str:
        call_id = str(data.get("call_id", ""))
        card = self.card(call_id, str(data.get("name", "")))
        if kind == "tool.requested":
            card.arguments = data.get("arguments")
        elif kind == "tool.approval":
            if card.arguments is None:
                card.arguments = data.get("arguments")
            state = data.get("state")
            card.status = state if state in ("waiting", "approved", "denied") else card.status
        elif kind == "tool.started":
            card.status = "running"
        elif kind == "tool.completed":
            # A denied call's result only tells the model so: the card stays denied.
            if card.status != "denied":
                card.status = "done" if data.get("ok") else "error"
            card.output = str(data.get("output", ""))
            mime = data.get("mime")
            card.mime = dict(mime) if isinstance(mime, dict) else {}
            card.truncated = bool(data.get("truncated"))
            ms = data.get("ms")
            card.ms = ms if isinstance(ms, int) else None
            card.has_result = True
        return call_id

    def footer_text(self, elapsed: float | None = None) -> str:
        """``2 of 8 rounds · 1,234 tokens (900 cached) · $0.0042 · 3 tool calls · 1.2 s ·
        stop``."""
        parts: list[str] = []
        rounds = self.rounds if self.rounds is not None else self.usage_events or None
        if rounds is not None:
            parts.append(f"{rounds} of {self.budget} rounds" if self.budget else f"{rounds} rounds")
        written = (self.cache_write_tokens, "written to cache")
        cache = [f"{n:,} {w}" for n, w in ((self.cached_tokens, "cached"), written) if n]
        about = "≈ " if self.estimated else ""  # counted by the gateway from characters
        parts.append(f"{about}{self.tokens:,} tokens" + (f" ({', '.join(cache)})" if cache else ""))
        if self.cost is not None:
            parts.append(f"${self.cost:.4f}")
        if self.tools:
            n = len(self.tools)
            parts.append(f"{n} tool call{'s' if n != 1 else ''}")
        if elapsed is not None:
            parts.append(f"{elapsed:.1f} s")
        parts.append(self.reason or self.writing_text() or "running…")
        if self.compacted:
            parts.append(f"context: {self.compacted}")
        return " · ".join(parts)

    def writing_text(self) -> str | None:
        """``writing a python call… ≈ 40 tokens`` while the model writes a call, else None."""
        if self.writing is None or self.completed:
            return None
        name, tokens = self.writing
        count = f" ≈ {tokens:,} token{'s' if tokens != 1 else ''}" if tokens else ""
        return f"writing a {name} call…{count}"

    def empty_summary_text(self) -> str | None:
        """The empty-run summary, when the run ended with no answer."""
        if not self.completed or self.text.strip():
            return None
        if self.summary and self.summary.get("text"):
            return str(self.summary["text"])
        return f"No answer ({self.reason})."


def fold(events: list[dict[str, Any]]) -> RunView:
    """A view of a whole event list (replay, tests)."""
    view = RunView()
    for event in events:
        view.apply(event)
    return view


@dataclass
class ResolveResult:
    """What ``%resolve`` stores as ``_resolve`` (it returns nothing to display)."""

    text: str
    tool_calls: list[dict[str, Any]]
    run_id: str
    session_id: str
    events: list[dict[str, Any]]
    reason: str | None = None
    summary: dict[str, Any] | None = None

    @classmethod
    def of(cls, view: RunView) -> ResolveResult:
        return cls(
            text=view.answer(),
            tool_calls=[card.as_dict() for card in view.tools.values()],
            run_id=view.task_id or view.run_id,
            session_id=view.session_id,
            events=list(view.events),
            reason=view.reason,
            summary=view.summary,
        )

    def __repr__(self) -> str:
        n = len(self.tool_calls)
        return (
            f"<ResolveResult {self.run_id} ({self.reason or 'unfinished'}): "
            f"{len(self.text)} characters of text, {n} tool call{'s' if n != 1 else ''}; "
            "see .text, .tool_calls, .events>"
        )
