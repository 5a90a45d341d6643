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

    def usage(
        self,
        prompt_tokens: int,
        completion_tokens: int,
        *,
        cached_tokens: int = 0,
        cache_write_tokens: int = 0,
    ) -> Chunk:
        """The usage chunk sent after the finish when ``stream_options.include_usage`` is set.

        ``prompt_tokens`` counts every input token, cached ones included (OpenAI's sense);
        the cache details go where OpenAI puts reads (``prompt_tokens_details.cached_tokens``)
        and where Anthropic (and LiteLLM) put writes (``cache_creation_input_tokens``).
        """
        chunk = self._base()
        chunk["choices"] = []
        usage: dict[str, Any] = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        if cached_tokens or cache_write_tokens:
            usage["prompt_tokens_details"] = {"cached_tokens": cached_tokens}
            usage["cache_creation_input_tokens"] = cache_write_tokens
        chunk["usage"] = usage
        return chunk


def cache_counts(usage: dict[str, Any]) -> tuple[int, int]:
    """``(cached read, cache write)`` input tokens of a usage object in any of the shapes
    servers use: OpenAI's ``prompt_tokens_details.cached_tokens``, Anthropic's (and LiteLLM's)
    ``cache_read_input_tokens`` / ``cache_creation_input_tokens``, DeepSeek's
    ``prompt_cache_hit_tokens``."""
    details = usage.get("prompt_tokens_details")
    read = details.get("cached_tokens") if isinstance(details, dict) else None
    if not isinstance(read, int) or read <= 0:
        read = usage.get("cache_read_input_tokens") or usage.get("prompt_cache_hit_tokens")
    write = usage.get("cache_creation_input_tokens")
    return (
        read if isinstance(read, int) and read > 0 else 0,
        write if isinstance(write, int) and write > 0 else 0,
    )


def wants_usage(body: dict[str, Any]) -> bool:
    """True when the request asked for a usage chunk (``stream_options.include_usage``)."""
    options = body.get("stream_options")
    return isinstance(options, dict) and bool(options.get("include_usage"))
