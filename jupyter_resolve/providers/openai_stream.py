"""Normalizing the chunks of OpenAI-compatible servers (pure: no I/O).

Servers differ in small ways (see DESIGN.md section 8); the gateway hands the runtime one
dialect:

- ``reasoning`` becomes ``reasoning_content``;
- a usage chunk with ``choices: null`` (or none) gets ``choices: []``; every choice has an
  ``index`` and a ``finish_reason`` (None until the end);
- a tool-call fragment whose ``id`` differs from the call already open at its ``index`` (Ollama
  sends index 0 for parallel calls) is given the next free index, and the fragments that follow
  it without an id go with it; a fragment without ``index`` gets the current one;
- ``{"error": {...}}`` in the stream raises :class:`ProviderError` (``provider_stream_error``).
"""

from __future__ import annotations

from typing import Any

from ..contracts.errors import ProviderError
from .base import Chunk


def stream_error(obj: dict[str, Any]) -> ProviderError:
    """The ProviderError for an ``{"error": ...}`` object met in a stream."""
    error = obj.get("error")
    if isinstance(error, dict):
        message = str(error.get("message") or error.get("type") or error)
    else:
        message = str(error)
    return ProviderError(
        f"the provider failed mid-stream: {message}",
        code="provider_stream_error",
        hint="the provider reported an error after it started answering; try again",
    )


class ChunkNormalizer:
    """Normalizes the chunks of one stream, in order."""

    def __init__(self) -> None:
        # per choice: server index -> (our index, id of the call open there)
        self._calls: dict[int, dict[int, tuple[int, str | None]]] = {}
        self._next: dict[int, int] = {}

    def __call__(self, obj: Any) -> Chunk | None:
        """The normalized chunk, or None for something that is not a chunk at all."""
        if not isinstance(obj, dict):
            return None
        if obj.get("error") is not None and not obj.get("choices"):
            raise stream_error(obj)
        chunk = dict(obj)
        choices = chunk.get("choices")
        if not isinstance(choices, list):
            chunk["choices"] = []
            return chunk
        chunk["choices"] = [self._choice(c) for c in choices if isinstance(c, dict)]
        return chunk

    def _choice(self, choice: dict[str, Any]) -> dict[str, Any]:
        choice = dict(choice)
        position = int(choice.get("index") or 0)
        choice["index"] = position
        choice.setdefault("finish_reason", None)
        delta = choice.get("delta")
        if not isinstance(delta, dict):
            choice["delta"] = {}
            return choice
        delta = dict(delta)
        if "reasoning" in delta:
            reasoning = delta.pop("reasoning")
            if delta.get("reasoning_content") is None and reasoning is not None:
                delta["reasoning_content"] = reasoning
        calls = delta.get("tool_calls")
        if isinstance(calls, list):
            delta["tool_calls"] = [self._call(position, c) for c in calls if isinstance(c, dict)]
        choice["delta"] = delta
        return choice

    def _call(self, position: int, call: dict[str, Any]) -> dict[str, Any]:
        call = dict(call)
        open_calls = self._calls.setdefault(position, {})
        raw = call.get("index")
        if isinstance(raw, int):
            server_index = raw
        elif open_calls:
            server_index = max(open_calls)
        else:
            server_index = 0
        call_id = call.get("id") or None
        current = open_calls.get(server_index)
        if current is None or (
            call_id is not None and current[1] is not None and call_id != current[1]
        ):
            ours = self._next.get(position, 0)
            self._next[position] = ours + 1
            open_calls[server_index] = (ours, call_id)
        elif call_id is not None and current[1] is None:
            open_calls[server_index] = (current[0], call_id)
        call["index"] = open_calls[server_index][0]
        return call
