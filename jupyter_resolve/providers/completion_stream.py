"""Inline completion streamed from the provider (``suffix`` and ``fim`` styles): each piece is
passed on as it comes, held back only where it may start a stop sequence; at a stop the
rest of the stream is read but not shown: the provider, sent the same stops, ends there itself,
and its last event carries the usage that is counted."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ..contracts.completion import cut, safe_length
from ..contracts.errors import ProviderError
from .completion import Completion, usage_of
from .openai import OpenAIProvider


async def stream_completion(
    provider: OpenAIProvider, path: str, body: dict[str, Any], on_text: Callable[[str], None]
) -> Completion:
    """POST ``body`` with ``stream`` on; ``on_text`` gets each new piece of the suggestion."""
    url = provider.base_url + path
    payload = {**body, "stream": True}
    if provider.stream_usage:
        payload["stream_options"] = {"include_usage": True}
    headers = provider.headers()
    text, shown, ended = "", 0, False
    usage: dict[str, int] = {}
    async with provider._client_for().stream("POST", url, json=payload, headers=headers) as reply:
        if reply.status_code >= 400:
            raw = (await reply.aread()).decode(errors="replace")
            raise ProviderError(
                provider._redact(
                    f"{provider.label} at {url} answered {reply.status_code}: {raw[:300]}"
                )
            )
        async for line in reply.aiter_lines():
            if not line.startswith("data:"):
                continue
            data = line[5:].strip()
            if data == "[DONE]":
                break
            event = json.loads(data)
            usage = usage_of(event) or usage
            choices = event.get("choices") or []
            piece = str(choices[0].get("text") or "") if choices else ""
            if not piece or ended:
                continue
            whole = cut(text + piece)
            stopped = len(whole) < len(text + piece)
            text = whole
            upto = len(text) if stopped else safe_length(text)
            if upto > shown:
                on_text(text[shown:upto])
                shown = upto
            ended = stopped
    if shown < len(text):
        on_text(text[shown:])
    return Completion(text, usage)
