"""Model providers: each streams OpenAI chat-completion chunks for the gateway.

``scripted`` is the offline default; ``openai`` speaks to any OpenAI-compatible server;
``anthropic`` translates to and from the Messages API; ``local`` runs a GGUF model on a
llama.cpp server of its own (:mod:`.local`). :func:`make_provider` builds one from
the ``c.Resolve`` settings. Each provider's module loads when it is first made or named here
(``from jupyter_resolve.providers import AnthropicProvider``), so a server pays only for the
one it is configured with.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .base import Chunk, Provider

if TYPE_CHECKING:
    from .anthropic import AnthropicProvider
    from .openai import OpenAIProvider
    from .scripted import ScriptedProvider

__all__ = [
    "AnthropicProvider",
    "Chunk",
    "OpenAIProvider",
    "Provider",
    "ScriptedProvider",
    "make_provider",
]

KINDS = ("scripted", "openai", "anthropic", "local", "hub")
OPENAI_BASE_URL = "https://api.openai.com/v1"
ANTHROPIC_BASE_URL = "https://api.anthropic.com"
_LAZY = {
    "AnthropicProvider": ".anthropic",
    "OpenAIProvider": ".openai",
    "ScriptedProvider": ".scripted",
}


def __getattr__(name: str) -> Any:
    """The provider classes, imported on first use."""
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _hub(settings: Mapping[str, Any] | None, model: str, *args: Any) -> Provider:
    """The hub service's provider (its module loads only for ``kind == "hub"``)."""
    from .hub import make_hub_provider

    return make_hub_provider(settings or {}, model, *args)


def make_provider(
    kind: str,
    *,
    model: str,
    base_url: str,
    api_key: str | None,
    api_key_env: str,
    script: str | None,
    stream_usage: bool,
    timeout: float,
    max_retries: int = 3,
    thinking: int = 0,
    prompt_caching: bool = True,
    reasoning_effort: str = "",
    families: Mapping[str, Any] | None = None,
    local: Mapping[str, Any] | None = None,
    hub: Mapping[str, Any] | None = None,
    log: logging.Logger | None = None,
) -> Provider:
    """The provider named by ``kind`` (scripted | openai | anthropic | local | hub); ValueError
    otherwise. ``local`` holds the local model's settings (model, context, threads, max_tokens,
    tool_choice); ``hub`` the hub service's URL and this server's hub token (url, token).

    An empty ``base_url`` means the vendor's public endpoint; an empty ``model`` means the
    runtime's model (openai, anthropic) or "scripted".
    """
    if kind == "scripted":
        from .scripted import ScriptedProvider

        return ScriptedProvider(Path(script) if script else None, model=model or "scripted")
    if kind == "openai":
        from .families import parse_families
        from .openai import OpenAIProvider

        return OpenAIProvider(
            base_url or OPENAI_BASE_URL,
            api_key,
            model,
            stream_usage=stream_usage,
            reasoning_effort=reasoning_effort,
            families=parse_families(families or {}),
            timeout=timeout,
            max_retries=max_retries,
            api_key_env=api_key_env,
        )
    if kind == "anthropic":
        from .anthropic import AnthropicProvider

        return AnthropicProvider(
            base_url or ANTHROPIC_BASE_URL,
            api_key,
            model,
            timeout=timeout,
            max_retries=max_retries,
            api_key_env=api_key_env,
            thinking=thinking,
            cache=prompt_caching,
        )
    if kind == "local":
        from .families import parse_families
        from .local import LocalProvider
        from .local_server import LocalModelServer, default_model

        settings = dict(local or {})
        server = LocalModelServer(
            str(settings.get("model") or default_model()),
            context=int(settings.get("context") or 4096),
            threads=int(settings.get("threads") or 1),
            log=log or logging.getLogger("jupyter_resolve"),
        )
        return LocalProvider(
            server,
            timeout=timeout,
            families=parse_families(families or {}),
            max_tokens=int(settings.get("max_tokens") or 512),
            tool_choice=str(settings.get("tool_choice") or ""),
        )
    if kind == "hub":
        return _hub(hub, model, families, timeout, max_retries, stream_usage, reasoning_effort)
    raise ValueError(f"unknown provider {kind!r}: choose one of {', '.join(KINDS)}")
