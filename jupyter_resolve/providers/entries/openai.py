"""``openai``: any OpenAI-compatible server (:mod:`jupyter_resolve.providers.openai`)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ..registry import ProviderConfig, ProviderSpec, http_settings

if TYPE_CHECKING:
    from ..base import Provider


def make(config: ProviderConfig, log: logging.Logger) -> Provider:
    from ..families import parse_families
    from ..openai import OpenAIProvider

    return OpenAIProvider(
        **http_settings(config),
        stream_usage=config.stream_usage,
        reasoning_effort=config.reasoning_effort,
        families=parse_families(config.model_families),
    )


PROVIDER = ProviderSpec(
    summary="any OpenAI-compatible server: OpenAI, Ollama, vLLM, llama.cpp, LM Studio",
    make=make,
    default_model="gpt-4o-mini",
    default_base_url="https://api.openai.com/v1",
    default_key_env="OPENAI_API_KEY",
)
