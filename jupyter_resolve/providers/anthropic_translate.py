"""OpenAI chat completions <-> Anthropic Messages API (pure: no I/O).

:func:`to_messages_request` turns the runtime's OpenAI request into a Messages request;
:class:`StreamTranslator` turns the Messages stream events back into OpenAI chunks. Tool-call
indexes in the chunks count ``tool_use`` blocks only (0, 1, ...), whatever their block index.
"""

from __future__ import annotations

import json
from typing import Any

from ..contracts.bodies import text_of
from ..contracts.errors import ProviderError
from .base import Chunk
from .chunks import ChunkBuilder

ANTHROPIC_VERSION = "2023-06-01"

FINISH_REASONS = {
    "tool_use": "tool_calls",
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "pause_turn": "stop",
    "refusal": "content_filter",
}


def _blocks(content: Any) -> list[dict[str, Any]]:
    """OpenAI message content as Anthropic content blocks (text only; empty text dropped)."""
    text = text_of(content)
    return [{"type": "text", "text": text}] if text else []


def _arguments(raw: Any) -> Any:
    if isinstance(raw, dict):
        return raw
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except (TypeError, ValueError):
        return {"_raw": str(raw)}
    return value if isinstance(value, dict) else {"value": value}


def to_messages(messages: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """The ``system`` text and the Messages-API ``messages`` for OpenAI ``messages``.

    Consecutive messages of one role are merged (so consecutive tool results form one user
    message, tool results first).
    """
    system: list[str] = []
    out: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})

    for message in messages:
        role = message.get("role")
        content = message.get("content")
        if role in ("system", "developer"):
            text = text_of(content)
            if text:
                system.append(text)
        elif role == "user":
            add("user", _blocks(content))
        elif role == "assistant":
            blocks = _blocks(content)
            for call in message.get("tool_calls") or []:
                function = call.get("function") or {}
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": call.get("id") or "",
                        "name": function.get("name") or "",
                        "input": _arguments(function.get("arguments")),
                    }
                )
            add("assistant", blocks)
        elif role == "tool":
            add(
                "user",
                [
                    {
                        "type": "tool_result",
                        "tool_use_id": message.get("tool_call_id") or "",
                        "content": text_of(content),
                    }
                ],
            )
    return "\n\n".join(system), out


def to_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI function tools as Anthropic tools."""
    out: list[dict[str, Any]] = []
    for tool in tools:
        inner = tool.get("function")
        function: dict[str, Any] = inner if isinstance(inner, dict) else tool
        entry: dict[str, Any] = {
            "name": function.get("name") or "",
            "input_schema": function.get("parameters") or {"type": "object", "properties": {}},
        }
        if function.get("description"):
            entry["description"] = function["description"]
        out.append(entry)
    return out


def to_tool_choice(choice: Any) -> dict[str, Any] | None:
    if choice == "auto":
        return {"type": "auto"}
    if choice == "required":
        return {"type": "any"}
    if choice == "none":
        return {"type": "none"}
    if isinstance(choice, dict):
        name = (choice.get("function") or {}).get("name")
        if name:
            return {"type": "tool", "name": name}
    return None


def to_messages_request(body: dict[str, Any], *, model: str, max_tokens: int) -> dict[str, Any]:
    """The Messages-API request for an OpenAI chat-completions ``body``.

    ``model`` (when non-empty) wins over the body's; ``max_tokens`` is the default when the
    body sets neither ``max_tokens`` nor ``max_completion_tokens``.
    """
    system, messages = to_messages([m for m in body.get("messages") or [] if isinstance(m, dict)])
    request: dict[str, Any] = {
        "model": model or body.get("model") or "",
        "max_tokens": int(
            body.get("max_completion_tokens") or body.get("max_tokens") or max_tokens
        ),
        "messages": messages,
        "stream": True,
    }
    if system:
        request["system"] = system
    tools = [t for t in body.get("tools") or [] if isinstance(t, dict)]
    if tools:
        request["tools"] = to_tools(tools)
        choice = to_tool_choice(body.get("tool_choice"))
        if choice is not None:
            request["tool_choice"] = choice
    for key in ("temperature", "top_p"):
        if body.get(key) is not None:
            request[key] = body[key]
    stop = body.get("stop")
    if stop:
        request["stop_sequences"] = [stop] if isinstance(stop, str) else list(stop)
    return request


class StreamTranslator:
    """Anthropic stream events in, OpenAI chunks out, for one response."""

    def __init__(self, model: str, *, include_usage: bool) -> None:
        self.build = ChunkBuilder(model)
        self.include_usage = include_usage
        self.input_tokens = 0
        self.output_tokens = 0
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
        return []

    def _on_content_block_delta(self, data: dict[str, Any]) -> list[Chunk]:
        delta = data.get("delta") or {}
        kind = delta.get("type")
        if kind == "text_delta" and delta.get("text"):
            return [self.build.delta({"content": delta["text"]})]
        if kind == "thinking_delta" and delta.get("thinking"):
            return [self.build.delta({"reasoning_content": delta["thinking"]})]
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
            chunks.append(self.build.usage(self.input_tokens, self.output_tokens))
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
        if usage.get("output_tokens") is not None:
            self.output_tokens = int(usage["output_tokens"])
