"""``hub``: the organization's hub service holds the keys (:mod:`jupyter_resolve.providers.hub`;
its settings: :mod:`jupyter_resolve.config_hub`)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from ...config_hub import HubSettings
from ..registry import ProviderSpec

if TYPE_CHECKING:
    from ..base import Provider


def make(config: Any, log: logging.Logger) -> Provider:
    from ..hub import make_hub_provider

    return make_hub_provider(
        {
            "url": config.resolved_hub_service_url(),
            "token": config.hub_api_token(),
            "stream_timeout": config.hub_stream_timeout,
        },
        config.model,
        config.model_families,
        config.provider_timeout,
        config.provider_max_retries,
        config.stream_usage,
        config.reasoning_effort,
    )


PROVIDER = ProviderSpec(
    summary="the organization's hub service holds the keys: c.Resolve.hub_service_url",
    make=make,
    default_model="default",  # the hub service's default model for this user
    settings=HubSettings,
)
