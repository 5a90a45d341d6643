"""OpenAI chat-completions facade over normalized events (pure).

Turns a run's events into ``chat.completion.chunk`` dicts (streaming) or one
``chat.completion`` (non-streaming), so the official ``openai`` client can talk to the agent.
"""

from __future__ import annotations

import time
from typing import Any

from .bodies import Event

FINISH = {"stop": "stop", "budget": "length", "cancelled": "stop", "interrupted": "stop"}


class CompletionShaper:
    """Shape one run's events as OpenAI chunks."""

    def __init__(self, run_id: str, model: str) -> None:
        self.id = f"chatcmpl-{run_id}"
        self.model = model
        self.created = int(time.time())
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.usage = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
        self.finish_reason: str | None = None
        self.error: dict[str, Any] | None = None

    def chunk(self, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    def first(self) -> dict[str, Any]:
        return self.chunk({"role": "assistant", "content": ""})

    def feed(self, event: Event) -> list[dict[str, Any]]:
        """Chunks for one event (none for events OpenAI has no shape for)."""
        data = event.data
        if event.type == "text.delta":
            self.text.append(data["text"])
            return [self.chunk({"content": data["text"]})]
        if event.type == "reasoning.delta":
            self.reasoning.append(data["text"])
            return [self.chunk({"reasoning_content": data["text"]})]
        if event.type == "usage":
            self.usage["prompt_tokens"] += int(data.get("prompt_tokens", 0))
            self.usage["completion_tokens"] += int(data.get("completion_tokens", 0))
            self.usage["total_tokens"] = (
                self.usage["prompt_tokens"] + self.usage["completion_tokens"]
            )
            return []
        if event.type == "run.error":
            self.error = {"message": data.get("message", ""), "code": data.get("code")}
            return []
        if event.type == "run.completed":
            reason = data.get("reason", "stop")
            self.finish_reason = FINISH.get(reason, "stop")
            if reason == "error" and not self.text:
                return []
            return [self.chunk({}, self.finish_reason)]
        return []

    def usage_chunk(self) -> dict[str, Any]:
        chunk = self.chunk({})
        chunk["choices"] = []
        chunk["usage"] = dict(self.usage)
        return chunk

    def failed(self) -> bool:
        """The run ended in error without text: an error, not an empty answer."""
        return self.error is not None and not self.text

    def completion(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self.text)}
        if self.reasoning:
            message["reasoning_content"] = "".join(self.reasoning)
        return {
            "id": self.id,
            "object": "chat.completion",
            "created": self.created,
            "model": self.model,
            "choices": [
                {"index": 0, "message": message, "finish_reason": self.finish_reason or "stop"}
            ],
            "usage": dict(self.usage),
        }
