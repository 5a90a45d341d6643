"""Model providers: each streams OpenAI chat-completion chunks for the gateway.

``scripted`` is the offline default; ``openai`` speaks to any OpenAI-compatible server;
``anthropic`` translates to and from the Messages API; ``local`` runs a GGUF model on a
llama.cpp server of its own (:mod:`.local`); ``hub`` asks the organization's hub service. Each
is an entry of the ``jupyter_resolve.providers`` group (:mod:`.registry`, :mod:`.entries`), and
:func:`make_provider` builds the one ``c.Resolve.provider`` names. Each provider's module loads
when it is first made or named here (``from jupyter_resolve.providers import
AnthropicProvider``), so a server pays only for the one it is configured with.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .base import Chunk, Provider
from .registry import make_provider

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
