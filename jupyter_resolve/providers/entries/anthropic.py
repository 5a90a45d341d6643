"""``anthropic``: the Messages API, translated (:mod:`jupyter_resolve.providers.anthropic`)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from traitlets import Bool, Int, validate
from traitlets.config import Configurable

from ..registry import ProviderSpec, http_settings

if TYPE_CHECKING:
    from ..base import Provider


class AnthropicSettings(Configurable):
    """The Anthropic provider's settings (part of ``c.Resolve``)."""

    thinking = Int(
        0,
        config=True,
        help="Anthropic extended thinking: 0 (off) or a budget in tokens (at least 1024). "
        "Thinking blocks are kept in the session and sent back where the API requires them.",
    )
    prompt_caching = Bool(
        True,
        config=True,
        help="Mark Anthropic prompt-caching breakpoints (tools, system, the newest elided "
        "tool output, the newest message).",
    )

    @validate("thinking")
    def _check_thinking(self, proposal: dict[str, Any]) -> int:
        value = int(proposal["value"])
        if value != 0 and value < 1024:
            raise ValueError(f"Resolve.thinking must be 0 (off) or at least 1024, not {value}")
        return value


def make(config: Any, log: logging.Logger) -> Provider:
    from ..anthropic import AnthropicProvider

    return AnthropicProvider(
        **http_settings(config), thinking=config.thinking, cache=config.prompt_caching
    )


PROVIDER = ProviderSpec(
    summary="Anthropic's Messages API",
    make=make,
    default_model="claude-sonnet-4-5",
    default_base_url="https://api.anthropic.com",
    default_key_env="ANTHROPIC_API_KEY",
    settings=AnthropicSettings,
)
