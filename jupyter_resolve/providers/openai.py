"""Any OpenAI-compatible chat-completions server: OpenAI, Ollama, vLLM, llama.cpp, LM Studio."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Any

from ..contracts.errors import ProviderError
from ..contracts.sse import DONE, SSEEvent, parse_data
from ._http import HTTPProvider
from .base import Chunk
from .chunks import ChunkBuilder, wants_usage
from .openai_stream import ChunkNormalizer, stream_error


class OpenAIProvider(HTTPProvider):
    """Streams ``POST {base_url}/chat/completions``; ``base_url`` ends in ``/v1`` or the like.

    ``model`` replaces the runtime's model when set; ``stream_usage=False`` drops
    ``stream_options`` for servers that reject it.
    """

    name = "openai"
    label = "the OpenAI-compatible provider"

    def __init__(
        self,
        base_url: str,
        api_key: str | None,
        model: str,
        *,
        stream_usage: bool = True,
        timeout: float = 120,
        max_retries: int = 3,
        api_key_env: str = "",
        backoff_base: float = 0.5,
        backoff_cap: float = 8.0,
    ) -> None:
        super().__init__(
            base_url=base_url,
            api_key=api_key,
            model=model,
            api_key_env=api_key_env,
            timeout=timeout,
            max_retries=max_retries,
            backoff_base=backoff_base,
            backoff_cap=backoff_cap,
        )
        self.stream_usage = stream_usage

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "stream_usage": self.stream_usage}

    def payload(self, body: dict[str, Any]) -> dict[str, Any]:
        """The body sent upstream: the runtime's, with the configured model and stream on."""
        payload = dict(body)
        if self.model:
            payload["model"] = self.model
        payload["stream"] = True
        if not self.stream_usage:
            payload.pop("stream_options", None)
        return payload

    def headers(self) -> dict[str, str]:
        headers = {"Accept": "text/event-stream"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        return headers

    async def stream_chat(self, body: dict[str, Any], run_id: str | None) -> AsyncIterator[Chunk]:
        url = f"{self.base_url}/chat/completions"
        payload = self.payload(body)
        normalize = ChunkNormalizer()
        async with aclosing(self._events(url, self.headers(), payload)) as events:
            async for event in events:
                if isinstance(event, dict):
                    for whole in completion_to_chunks(event, wants_usage(payload)):
                        yield whole
                    return
                if event.data.strip() == DONE:
                    return
                for obj in self._parse(event):
                    chunk = normalize(obj)
                    if chunk is not None:
                        yield chunk

    def _parse(self, event: SSEEvent) -> list[Any]:
        try:
            values = parse_data(event.data)
        except ValueError as exc:
            raise ProviderError(
                f"{self.label} sent a stream line that is not JSON: {event.data[:200]!r}",
                code="provider_stream_error",
            ) from exc
        if event.event == "error":
            raise stream_error({"error": values[0] if values else event.data})
        return values


def completion_to_chunks(completion: dict[str, Any], include_usage: bool) -> list[Chunk]:
    """A whole ``chat.completion`` (from a server that did not stream) as chunks."""
    if completion.get("error") is not None:
        raise stream_error(completion)
    build = ChunkBuilder(
        str(completion.get("model") or ""), completion_id=str(completion.get("id") or "") or None
    )
    chunks: list[Chunk] = []
    finish = "stop"
    for choice in completion.get("choices") or []:
        message = dict(choice.get("message") or {})
        finish = choice.get("finish_reason") or finish
        if "reasoning" in message and not message.get("reasoning_content"):
            message["reasoning_content"] = message.pop("reasoning")
        calls = message.get("tool_calls")
        if isinstance(calls, list):
            message["tool_calls"] = [{**call, "index": i} for i, call in enumerate(calls)]
        chunks.append(build.delta({k: v for k, v in message.items() if v is not None}))
    chunks.append(build.finish(finish))
    usage = completion.get("usage")
    if include_usage and isinstance(usage, dict):
        chunks.append(
            build.usage(
                int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
            )
        )
    return chunks
