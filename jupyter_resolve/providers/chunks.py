"""Building OpenAI ``chat.completion.chunk`` dicts (pure: no I/O).

The scripted provider and the Anthropic translation both produce OpenAI chunks; this module is
the one place that knows their shape.
"""

from __future__ import annotations

import secrets
import time
from typing import Any

from .base import Chunk


def new_call_id() -> str:
    """A tool-call id in OpenAI's style: ``call_<random hex>``."""
    return f"call_{secrets.token_hex(12)}"


def estimate_tokens(text: str) -> int:
    """A rough token count (four characters a token), never below 1 for non-empty text."""
    return max(1, len(text) // 4) if text else 0


class ChunkBuilder:
    """Makes the chunks of one completion: same ``id``, ``created`` and ``model`` on each."""

    def __init__(self, model: str, *, completion_id: str | None = None) -> None:
        self.model = model
        self.id = completion_id or f"chatcmpl-{secrets.token_hex(12)}"
        self.created = int(time.time())

    def _base(self) -> Chunk:
        return {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
        }

    def delta(self, delta: dict[str, Any], finish_reason: str | None = None) -> Chunk:
        """A chunk with one choice carrying ``delta``."""
        chunk = self._base()
        chunk["choices"] = [{"index": 0, "delta": delta, "finish_reason": finish_reason}]
        return chunk

    def finish(self, finish_reason: str) -> Chunk:
        """The last choice chunk: an empty delta and the finish reason."""
        return self.delta({}, finish_reason)

    def usage(self, prompt_tokens: int, completion_tokens: int) -> Chunk:
        """The usage chunk sent after the finish when ``stream_options.include_usage`` is set."""
        chunk = self._base()
        chunk["choices"] = []
        chunk["usage"] = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        return chunk


def wants_usage(body: dict[str, Any]) -> bool:
    """True when the request asked for a usage chunk (``stream_options.include_usage``)."""
    options = body.get("stream_options")
    return isinstance(options, dict) and bool(options.get("include_usage"))
