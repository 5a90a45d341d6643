"""Anthropic's Messages API, translated to and from OpenAI chat completions."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Any

from ..contracts.errors import ProviderError
from ..contracts.sse import DONE, parse_data
from ._http import HTTPProvider
from .anthropic_translate import ANTHROPIC_VERSION, StreamTranslator, to_messages_request
from .base import Chunk
from .chunks import wants_usage

MAX_MODEL_PAGES = 10


class AnthropicProvider(HTTPProvider):
    """Streams ``POST {base_url}/v1/messages`` and yields OpenAI chunks."""

    name = "anthropic"
    label = "Anthropic"

    def __init__(
        self,
        base_url: str = "https://api.anthropic.com",
        api_key: str | None = None,
        model: str = "",
        *,
        timeout: float = 120,
        max_retries: int = 3,
        max_tokens: int = 4096,
        thinking: int = 0,
        cache: bool = True,
        api_key_env: str = "",
        backoff_base: float = 0.5,
        backoff_cap: float = 8.0,
    ) -> None:
        super().__init__(
            base_url=base_url or "https://api.anthropic.com",
            api_key=api_key,
            model=model,
            api_key_env=api_key_env,
            timeout=timeout,
            max_retries=max_retries,
            backoff_base=backoff_base,
            backoff_cap=backoff_cap,
        )
        self.max_tokens = max_tokens
        self.thinking = thinking
        self.cache = cache

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "thinking": self.thinking, "prompt_caching": self.cache}

    def headers(self) -> dict[str, str]:
        headers = {"anthropic-version": ANTHROPIC_VERSION, "Accept": "text/event-stream"}
        if self._api_key:
            headers["x-api-key"] = self._api_key
        return headers

    async def stream_chat(self, body: dict[str, Any], run_id: str | None) -> AsyncIterator[Chunk]:
        url = f"{self.base_url}/v1/messages"
        request = to_messages_request(
            body,
            model=self.model,
            max_tokens=self.max_tokens,
            thinking=self.thinking,
            cache=self.cache,
        )
        translate = StreamTranslator(request["model"], include_usage=wants_usage(body))
        async with aclosing(self._events(url, self.headers(), request)) as events:
            async for event in events:
                if isinstance(event, dict):
                    if event.get("type") == "error":
                        translate.feed("error", event)
                    raise ProviderError(
                        f"{self.label} at {url} answered JSON instead of a stream",
                        code="provider_stream_error",
                    )
                if event.data.strip() == DONE:
                    continue
                try:
                    values = parse_data(event.data)
                except ValueError as exc:
                    raise ProviderError(
                        f"{self.label} sent a stream line that is not JSON: {event.data[:200]!r}",
                        code="provider_stream_error",
                    ) from exc
                for value in values:
                    if isinstance(value, dict):
                        for chunk in translate.feed(event.event, value):
                            yield chunk
                if translate.done:
                    return
        if not translate.finished:
            raise ProviderError(
                f"the stream from {self.label} at {url} ended before the message did",
                code="provider_stream_error",
                hint="the connection to the provider was lost mid-answer; try again",
            )
        for chunk in translate.feed("message_stop", {"type": "message_stop"}):
            yield chunk

    async def list_models(self) -> list[dict[str, Any]]:
        """``GET {base_url}/v1/models``, every page (``has_more`` / ``last_id``)."""
        models: list[dict[str, Any]] = []
        after = ""
        for _page in range(MAX_MODEL_PAGES):
            query = f"?limit=1000&after_id={after}" if after else "?limit=1000"
            listing = await self._get_json(f"{self.base_url}/v1/models{query}", self.headers())
            if not isinstance(listing, dict):
                break
            for row in listing.get("data") or []:
                if isinstance(row, dict) and isinstance(row.get("id"), str):
                    name = row.get("display_name")
                    models.append({"id": row["id"], **({"name": name} if name else {})})
            after = str(listing.get("last_id") or "")
            if not listing.get("has_more") or not after:
                break
        return models
