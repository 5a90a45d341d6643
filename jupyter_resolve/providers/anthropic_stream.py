"""Anthropic Messages stream events -> OpenAI chat-completion chunks (pure: no I/O).

Tool-call indexes in the chunks count ``tool_use`` blocks only (0, 1, ...), whatever their
block index. A finished ``thinking`` block (its text and ``signature``) and a
``redacted_thinking`` block leave as a ``thinking_blocks`` delta; thinking text also streams as
``reasoning_content``. The usage chunk carries the cache reads and writes.
"""

from __future__ import annotations

import json
from typing import Any

from ..contracts.errors import ProviderError
from .base import Chunk
from .chunks import ChunkBuilder

FINISH_REASONS = {
    "tool_use": "tool_calls",
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "pause_turn": "stop",
    "refusal": "content_filter",
}


class StreamTranslator:
    """Anthropic stream events in, OpenAI chunks out, for one response."""

    def __init__(self, model: str, *, include_usage: bool) -> None:
        self.build = ChunkBuilder(model)
        self.include_usage = include_usage
        self.input_tokens = 0
        self.output_tokens = 0
        self.cache_read = 0
        self.cache_write = 0
        self._thinking: dict[int, dict[str, Any]] = {}  # block index -> thinking block so far
        self._signed: set[int] = set()  # thinking blocks whose signature_delta has come
        self.finished = False
        self.done = False
        self._tools: dict[int, int] = {}  # Anthropic block index -> OpenAI tool-call index

    def feed(self, event: str, data: dict[str, Any]) -> list[Chunk]:
        """The chunks for one event (``event`` may be "", then ``data["type"]`` names it)."""
        kind = data.get("type") or event
        handler = getattr(self, f"_on_{kind}", None)
        if handler is None:
            return []
        chunks: list[Chunk] = handler(data)
        return chunks

    def _on_message_start(self, data: dict[str, Any]) -> list[Chunk]:
        message = data.get("message") or {}
        if message.get("id"):
            self.build.id = str(message["id"])
        if message.get("model"):
            self.build.model = str(message["model"])
        self._usage(message.get("usage") or {})
        return [self.build.delta({"role": "assistant", "content": ""})]

    def _on_content_block_start(self, data: dict[str, Any]) -> list[Chunk]:
        block = data.get("content_block") or {}
        if block.get("type") == "tool_use":
            index = len(self._tools)
            self._tools[int(data.get("index") or 0)] = index
            chunks = [
                self.build.delta(
                    {
                        "tool_calls": [
                            {
                                "index": index,
                                "id": block.get("id") or "",
                                "type": "function",
                                "function": {"name": block.get("name") or "", "arguments": ""},
                            }
                        ]
                    }
                )
            ]
            if block.get("input"):
                chunks.append(self._arguments(index, json.dumps(block["input"])))
            return chunks
        if block.get("type") == "text" and block.get("text"):
            return [self.build.delta({"content": block["text"]})]
        if block.get("type") == "thinking":
            self._thinking[int(data.get("index") or 0)] = {
                "type": "thinking",
                "thinking": str(block.get("thinking") or ""),
                "signature": str(block.get("signature") or ""),
            }
            if block.get("thinking"):
                return [self.build.delta({"reasoning_content": block["thinking"]})]
        if block.get("type") == "redacted_thinking":
            return [self.build.delta({"thinking_blocks": [dict(block)]})]
        return []

    def _on_content_block_stop(self, data: dict[str, Any]) -> list[Chunk]:
        index = int(data.get("index") or 0)
        self._signed.discard(index)
        block = self._thinking.pop(index, None)
        if block is None:
            return []
        return [self.build.delta({"thinking_blocks": [block]})]

    def _on_content_block_delta(self, data: dict[str, Any]) -> list[Chunk]:
        delta = data.get("delta") or {}
        kind = delta.get("type")
        if kind == "text_delta" and delta.get("text"):
            return [self.build.delta({"content": delta["text"]})]
        if kind == "thinking_delta" and delta.get("thinking"):
            block = self._thinking.get(int(data.get("index") or 0))
            if block is not None:
                block["thinking"] += delta["thinking"]
            return [self.build.delta({"reasoning_content": delta["thinking"]})]
        if kind == "signature_delta" and isinstance(delta.get("signature"), str):
            position = int(data.get("index") or 0)
            block = self._thinking.get(position)
            if block is not None:
                # the first delta replaces a signature that came with content_block_start
                # (LiteLLM's /v1/messages sends it in both; Anthropic's SDKs assign, not append)
                signed = block["signature"] if position in self._signed else ""
                block["signature"] = signed + delta["signature"]
                self._signed.add(position)
            return []
        if kind == "input_json_delta" and delta.get("partial_json"):
            index = self._tools.get(int(data.get("index") or 0))
            if index is not None:
                return [self._arguments(index, delta["partial_json"])]
        return []

    def _on_message_delta(self, data: dict[str, Any]) -> list[Chunk]:
        self._usage(data.get("usage") or {})
        reason = (data.get("delta") or {}).get("stop_reason")
        if reason is None:
            return []
        self.finished = True
        return [self.build.finish(FINISH_REASONS.get(str(reason), "stop"))]

    def _on_message_stop(self, data: dict[str, Any]) -> list[Chunk]:
        chunks = [] if self.finished else [self.build.finish("stop")]
        self.finished = True
        self.done = True
        if self.include_usage:
            chunks.append(
                self.build.usage(
                    self.input_tokens,
                    self.output_tokens,
                    cached_tokens=self.cache_read,
                    cache_write_tokens=self.cache_write,
                )
            )
        return chunks

    def _on_error(self, data: dict[str, Any]) -> list[Chunk]:
        error = data.get("error") or {}
        message = error.get("message") or error.get("type") or "unknown error"
        raise ProviderError(
            f"Anthropic failed mid-stream: {message}"
            + (f" ({error['type']})" if error.get("type") else ""),
            code="provider_stream_error",
            status=529 if error.get("type") == "overloaded_error" else 502,
            retryable=error.get("type") in ("overloaded_error", "api_error"),
            hint="the provider reported an error after it started answering; try again",
        )

    def _arguments(self, index: int, piece: str) -> Chunk:
        return self.build.delta(
            {"tool_calls": [{"index": index, "function": {"arguments": piece}}]}
        )

    def _usage(self, usage: dict[str, Any]) -> None:
        prompt = sum(
            int(usage.get(key) or 0)
            for key in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        )
        if prompt:
            self.input_tokens = prompt
            self.cache_read = int(usage.get("cache_read_input_tokens") or 0)
            self.cache_write = int(usage.get("cache_creation_input_tokens") or 0)
        if usage.get("output_tokens") is not None:
            self.output_tokens = int(usage["output_tokens"])
