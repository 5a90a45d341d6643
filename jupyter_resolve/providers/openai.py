"""Any OpenAI-compatible chat-completions server: OpenAI, Ollama, vLLM, llama.cpp, LM Studio."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import aclosing
from typing import Any

from ..contracts.errors import ProviderError
from ..contracts.sse import DONE, SSEEvent, parse_data
from ._http import HTTPProvider
from .base import Chunk
from .chunks import ChunkBuilder, cache_counts, wants_usage
from .families import Family, family_of, shape_request
from .openai_stream import ChunkNormalizer, stream_error
from .relay import EventTooLarge, SSERelay


class OpenAIProvider(HTTPProvider):
    """Streams ``POST {base_url}/chat/completions``; ``base_url`` ends in ``/v1`` or the like.

    ``model`` is the default when the runtime's request names none; ``stream_usage=False``
    drops ``stream_options`` for servers that reject it. The request is shaped for the model's
    family (:mod:`.families`: reasoning models, ``reasoning_effort``; reasoning text is never
    sent back).
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
        reasoning_effort: str = "",
        families: Mapping[str, Family] | None = None,
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
        self.reasoning_effort = reasoning_effort
        self.families = dict(families or {})

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "stream_usage": self.stream_usage}

    def payload(self, body: dict[str, Any]) -> dict[str, Any]:
        """The body sent upstream: the runtime's (its model, else the configured one), shaped
        for the model's family, with stream on."""
        model = str(body.get("model") or self.model)
        payload = shape_request(
            {**body, "model": model},
            family_of(model, self.families),
            reasoning_effort=self.reasoning_effort,
        )
        payload["stream"] = True
        if "api.openai.com" in self.base_url:
            payload.pop("cache_prompt", None)  # llama.cpp's field; OpenAI refuses unknown ones
        if not self.stream_usage:
            payload.pop("stream_options", None)
        return payload

    async def list_models(self) -> list[dict[str, Any]]:
        """``GET {base_url}/models`` (OpenAI, vLLM, llama.cpp, Ollama, LiteLLM all serve it)."""
        listing = await self._get_json(f"{self.base_url}/models", self.headers())
        rows = listing.get("data") if isinstance(listing, dict) else None
        return [
            {"id": row["id"]}
            for row in rows or []
            if isinstance(row, dict) and isinstance(row.get("id"), str)
        ]

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

    async def relay(self, body: dict[str, Any], run_id: str | None) -> AsyncIterator[Chunk | bytes]:
        """The provider's own bytes where the runtime can read them as they are (most of a
        stream: see :mod:`.relay`), normalized chunks where the gateway has work to do."""
        url = f"{self.base_url}/chat/completions"
        payload = self.payload(body)
        normalize = ChunkNormalizer()
        relay = SSERelay()
        async with aclosing(self._pieces(url, self.headers(), payload)) as pieces:
            async for piece in pieces:
                if isinstance(piece, dict):
                    for whole in completion_to_chunks(piece, wants_usage(payload)):
                        yield whole
                    return
                try:
                    items = relay.feed(piece)
                except EventTooLarge as exc:
                    raise ProviderError(
                        f"{self.label} sent {exc} in its stream", code="provider_stream_error"
                    ) from exc
                out, done = self._relayed(items, normalize)
                for item in out:
                    yield item
                if done:
                    return
        out, _ = self._relayed(relay.close(), normalize)
        for item in out:
            yield item

    def _relayed(
        self, items: list[bytes | SSEEvent], normalize: ChunkNormalizer
    ) -> tuple[list[Chunk | bytes], bool]:
        """What goes to the runtime for the relay's items, and whether ``[DONE]`` came."""
        out: list[Chunk | bytes] = []
        for item in items:
            if isinstance(item, bytes):
                out.append(item)
                continue
            if item.data.strip() == DONE:
                return out, True
            out.extend(chunk for chunk in map(normalize, self._parse(item)) if chunk is not None)
        return out, False

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
        read, write = cache_counts(usage)
        chunks.append(
            build.usage(
                int(usage.get("prompt_tokens") or 0),
                int(usage.get("completion_tokens") or 0),
                cached_tokens=read,
                cache_write_tokens=write,
            )
        )
    return chunks
