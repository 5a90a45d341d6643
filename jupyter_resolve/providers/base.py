"""What every provider is: a streaming OpenAI chat-completions endpoint.

The gateway's internal inference endpoint receives the runtime's OpenAI-shaped request and
asks the configured provider for a stream of OpenAI ``chat.completion.chunk`` dicts; it writes
each as ``data: {json}\\n\\n`` and ends with ``data: [DONE]``. A provider raises
:class:`~jupyter_resolve.contracts.errors.ProviderError` — before the first chunk, the gateway
answers with that status; after it, as a mid-stream ``{"error": ...}`` frame.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from typing import Any

Chunk = dict[str, Any]


class Provider(ABC):
    """A model provider. ``body`` is the OpenAI request the runtime sent (model, messages,
    tools, stream, stream_options); ``run_id`` comes from the ``X-Resolve-Run-Id`` header."""

    name: str = "provider"
    # the tools a run offers this provider's model at most when its soul names none (a small
    # model's lean set, in the order the model is shown them); None: every allowed tool
    lean_tools: tuple[str, ...] | None = None

    @abstractmethod
    def stream_chat(self, body: dict[str, Any], run_id: str | None) -> AsyncIterator[Chunk]:
        """Yield OpenAI chunk dicts for one completion; raise ProviderError on failure."""

    def relay(self, body: dict[str, Any], run_id: str | None) -> AsyncIterator[Chunk | bytes]:
        """The stream for the runtime: chunk dicts, or bytes that are already SSE frames the
        runtime reads as they are (an OpenAI-compatible provider's own, relayed untouched).
        By default the chunks of :meth:`stream_chat`."""
        return self.stream_chat(body, run_id)

    @abstractmethod
    def describe(self) -> dict[str, Any]:
        """What /resolve/api/health shows: name, model, base URL. Never a key."""

    async def list_models(self) -> list[dict[str, Any]]:
        """The models the provider offers, each ``{"id", "name"?}``; raise ProviderError when
        it cannot say. By default the one configured model."""
        model = str(getattr(self, "model", "") or "")
        return [{"id": model}] if model else []

    async def aclose(self) -> None:
        """Release connections."""
        return None
