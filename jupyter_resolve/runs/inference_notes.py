"""What the gateway learns from a run's inference streams that the runtime does not carry.

agent-httpd forwards text, reasoning, tool calls and two token counts; a provider says more.
The inference endpoint watches each completion (:class:`CompletionWatch`) and notes, in the
run's own :class:`RunNotes`:

- the thinking blocks (with their signatures) of a turn that called tools, by the turn's first
  call id. The next round's request gets them back on that assistant message (the runtime
  rebuilds it without them), and the turn's first ``tool.requested`` carries them, so the run
  log holds them and a later run's transcript sends them back too (contracts/transcript.py);
- each completion's cache reads and writes and its cost (from the price table), merged into
  the run's next ``usage`` event (the runtime emits one per completion, after its stream), and
  ``estimated: true`` when the provider counted the tokens itself (a server that sent none).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..contracts.frames import Emitted
from ..contracts.prices import Price, price_for, round_cost
from ..providers.chunks import cache_counts

RUNTIME_INFERENCE_CODES = ("inference_http", "inference_stream")  # agent-httpd's for a failure


@dataclass
class RunNotes:
    """One run's notes (the run holds them: ``Run.notes``)."""

    blocks: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # first call id ->
    usage: deque[dict[str, Any]] = field(default_factory=deque)
    cost: float = 0.0
    priced: bool = False
    failure: str | None = None  # the provider's code for the round that failed


class InferenceNotes:
    """What the gateway does with a run's notes (each run holds its own: ``Run.notes``), and the
    price table it costs completions with."""

    def __init__(self, prices: Mapping[str, Price]) -> None:
        self.prices = dict(prices)

    @staticmethod
    def failed(notes: RunNotes | None, code: str) -> None:
        """A round failed at the provider with ``code`` (``budget_exceeded``, ...): the run's
        ``run.error`` says that rather than the runtime's ``inference_http``."""
        if notes is not None:
            notes.failure = code

    def watch(self, notes: RunNotes | None, model: str) -> CompletionWatch:
        return CompletionWatch(self, notes, model)

    @staticmethod
    def restore(notes: RunNotes | None, body: dict[str, Any]) -> dict[str, Any]:
        """``body`` with the thinking blocks put back on the assistant turns of this run that
        called tools (a copy when one changed)."""
        if notes is None or not notes.blocks:
            return body
        messages = list(body.get("messages") or [])
        changed = False
        for i, message in enumerate(messages):
            if not isinstance(message, dict) or message.get("role") != "assistant":
                continue
            if message.get("thinking_blocks"):
                continue
            for call in message.get("tool_calls") or []:
                blocks = notes.blocks.get(str(call.get("id"))) if isinstance(call, dict) else None
                if blocks:
                    messages[i] = {**message, "thinking_blocks": blocks}
                    changed = True
                    break
        return {**body, "messages": messages} if changed else body

    @staticmethod
    def enrich(notes: RunNotes | None, emitted: list[Emitted]) -> list[Emitted]:
        """The run's events with what the streams said: thinking blocks on the first
        ``tool.requested`` of their turn; cache counts and cost on ``usage``."""
        out: list[Emitted] = []
        for kind, data in emitted:
            if kind == "tool.requested" and notes is not None:
                blocks = notes.blocks.get(str(data.get("call_id", "")))
                if blocks:
                    data = {**data, "thinking_blocks": blocks}
            elif kind == "usage":
                extra = notes.usage.popleft() if notes is not None and notes.usage else {}
                data = {"cached_tokens": 0, "cache_write_tokens": 0, **data, **extra}
            elif kind == "run.error" and notes is not None and notes.failure:
                if data.get("code") in RUNTIME_INFERENCE_CODES:
                    data = {**data, "code": notes.failure}
                notes.failure = None
            out.append((kind, data))
        return out


class CompletionWatch:
    """Watches one completion's chunks on their way to the runtime."""

    def __init__(self, inference: InferenceNotes, notes: RunNotes | None, model: str) -> None:
        self.prices = inference.prices
        self.notes = notes  # the run's (None: a round of no known run, noted nowhere)
        self.model = model
        self.thinking: list[dict[str, Any]] = []
        self.first_call: str | None = None

    def __call__(self, chunk: dict[str, Any]) -> dict[str, Any]:
        """The chunk as the runtime gets it (without ``thinking_blocks``), noting what it
        says."""
        choices = chunk.get("choices")
        for choice in choices if isinstance(choices, list) else []:
            delta = choice.get("delta") if isinstance(choice, dict) else None
            if not isinstance(delta, dict):
                continue
            blocks = delta.pop("thinking_blocks", None)
            if isinstance(blocks, list):
                self.thinking.extend(b for b in blocks if isinstance(b, dict))
            for call in delta.get("tool_calls") or []:
                call_id = call.get("id") if isinstance(call, dict) else None
                if self.first_call is None and isinstance(call_id, str) and call_id:
                    self.first_call = call_id
        if self.first_call is not None and self.thinking and self.notes is not None:
            # the turn's blocks so far; later pieces (none, in practice) join the same list
            self.notes.blocks[self.first_call] = self.thinking
        usage = chunk.get("usage")
        if isinstance(usage, dict) and self.notes is not None:
            self._usage(self.notes, usage, str(chunk.get("model") or self.model))
        return chunk

    def _usage(self, notes: RunNotes, usage: dict[str, Any], model: str) -> None:
        read, write = cache_counts(usage)
        note: dict[str, Any] = {"cached_tokens": read, "cache_write_tokens": write}
        if usage.get("estimated") is True:  # the server sent none: counted from characters
            note["estimated"] = True
        price = price_for(model, self.prices) or price_for(self.model, self.prices)
        if price is not None:
            cost = round_cost(
                price,
                prompt_tokens=int(usage.get("prompt_tokens") or 0),
                completion_tokens=int(usage.get("completion_tokens") or 0),
                cached_tokens=read,
                cache_write_tokens=write,
            )
            notes.cost += cost
            notes.priced = True
            note["cost"] = round(cost, 6)
            note["run_cost"] = round(notes.cost, 6)
        notes.usage.append(note)
