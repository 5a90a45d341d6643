"""Inline completion against the configured provider (issue 35): one request per suggestion,
in the style the model takes, with the provider's own key and client. Cancelling the awaiting
task closes the provider's connection (httpx aborts the request)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..contracts.completion import (
    MAX_TOKENS,
    STOPS,
    Style,
    chat_messages,
    clean_chat,
    cut,
    fim_payload,
    safe_length,
    scripted_completion,
    suffix_payload,
)
from ..contracts.errors import ProviderError
from .anthropic import AnthropicProvider
from .anthropic_translate import ANTHROPIC_VERSION
from .base import Provider
from .openai import OpenAIProvider


@dataclass
class Completion:
    text: str
    usage: dict[str, int] = field(default_factory=dict)


async def complete(
    provider: Provider,
    style: Style,
    model: str,
    prefix: str,
    suffix: str,
    language: str,
    on_text: Callable[[str], None] | None = None,
) -> Completion:
    """The suggestion for the cursor between ``prefix`` and ``suffix``. With ``on_text``, the
    ``suffix`` and ``fim`` styles stream it from the provider piece by piece."""
    if isinstance(provider, AnthropicProvider):
        return await _anthropic_chat(provider, model, prefix, suffix, language)
    if isinstance(provider, OpenAIProvider):
        server = getattr(provider, "server", None)  # the 'local' provider's llama.cpp server
        if server is not None:
            provider.base_url = await server.ensure()
        if style == "chat":
            return await _openai_chat(provider, model, prefix, suffix, language)
        path, body = (
            ("/fim/completions", fim_payload(model, prefix, suffix))
            if style == "fim"
            else ("/completions", suffix_payload(model, prefix, suffix))
        )
        if on_text is not None:
            return await stream_completion(provider, path, body, on_text)
        raw = await _post(provider, path, body)
        return Completion(cut(_choice_text(raw)), usage_of(raw))
    return Completion(scripted_completion(prefix))  # scripted and the offline demo


async def _openai_chat(
    provider: OpenAIProvider, model: str, prefix: str, suffix: str, language: str
) -> Completion:
    body = {
        "model": model,
        "messages": chat_messages(prefix, suffix, language),
        "max_tokens": MAX_TOKENS,
        "temperature": 0,
        "stop": STOPS[1:],  # a chat answer may open with a fence (unwrapped after)
        "stream": False,
    }
    raw = await _post(provider, "/chat/completions", body)
    choices = raw.get("choices") or [{}]
    message = choices[0].get("message") or {}
    return Completion(clean_chat(str(message.get("content") or ""), prefix, suffix), usage_of(raw))


async def _anthropic_chat(
    provider: AnthropicProvider, model: str, prefix: str, suffix: str, language: str
) -> Completion:
    system, user = chat_messages(prefix, suffix, language)
    body = {
        "model": model,
        "system": system["content"],
        "messages": [user],
        "max_tokens": MAX_TOKENS,
        "temperature": 0,
    }
    headers = {**provider.headers(), "anthropic-version": ANTHROPIC_VERSION}
    raw = await _request(provider, f"{provider.base_url}/v1/messages", headers, body)
    text = "".join(
        str(b.get("text") or "") for b in raw.get("content") or [] if isinstance(b, dict)
    )
    usage = raw.get("usage") or {}
    counts = {
        "prompt_tokens": int(usage.get("input_tokens") or 0),
        "completion_tokens": int(usage.get("output_tokens") or 0),
    }
    return Completion(clean_chat(text, prefix, suffix), counts)


async def _post(provider: OpenAIProvider, path: str, body: dict[str, Any]) -> dict[str, Any]:
    headers = {k: v for k, v in provider.headers().items() if k != "Accept"}
    return await _request(provider, provider.base_url + path, headers, body)


async def _request(
    provider: Any, url: str, headers: dict[str, str], body: dict[str, Any]
) -> dict[str, Any]:
    client = provider._client_for()  # the provider's client: its timeouts and proxy choice
    try:
        response = await client.post(url, json=body, headers=headers)
    except Exception as exc:
        raise ProviderError(provider._redact(f"{provider.label} at {url}: {exc}")) from exc
    from .hub import HubProvider  # here: the hub's module loads only where it is used

    if response.status_code >= 400 and isinstance(provider, HubProvider):
        # the hub service's refusal (budget, models, in flight) in its words, never a page
        raise provider._status_error(url, response.status_code, response.content, response.headers)
    if response.status_code >= 400:
        message = provider._redact(response.text[:300])
        raise ProviderError(
            f"{provider.label} at {url} answered {response.status_code}: {message}",
            status=response.status_code if response.status_code in (401, 403, 404, 429) else 502,
        )
    raw = response.json()
    return raw if isinstance(raw, dict) else {}


def _choice_text(raw: dict[str, Any]) -> str:
    choices = raw.get("choices") or [{}]
    first = choices[0] if isinstance(choices[0], dict) else {}
    if "text" in first:
        return str(first.get("text") or "")
    return str((first.get("message") or {}).get("content") or "")  # Mistral's FIM answer


def usage_of(raw: dict[str, Any]) -> dict[str, int]:
    """The OpenAI-style ``usage`` of an answer or a stream's last event; {} without one."""
    usage = raw.get("usage") or {}
    if not isinstance(usage, dict) or not usage:
        return {}
    return {
        "prompt_tokens": int(usage.get("prompt_tokens") or 0),
        "completion_tokens": int(usage.get("completion_tokens") or 0),
    }


# Streamed from the provider (suffix and fim): each piece passed on as it comes, held back
# only where it may start a stop sequence; at a stop the rest is read but not shown (the
# provider, sent the same stops, ends there itself, and its last event carries the usage).
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
