"""``c.Resolve.provider = "hub"``: the organization's hub service holds the keys.

The requests are the OpenAI provider's, sent to ``<hub_service_url>v1`` with the user's own hub
API token instead of a provider key (``jupyter_resolve.hub`` checks it with JupyterHub, applies
the user's models and budgets, and forwards upstream). What the service refuses is said in its
own words: over budget, its 429 names the limit and when it resets, and is not retried (waiting
a few seconds does not help); a model the user may not use is its 403.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import httpx

from ..contracts.errors import ProviderError
from ._http import provider_message
from .openai import OpenAIProvider

HINTS = {  # the service's own refusals: what the person can do about each
    "budget_exceeded": "ask the hub's administrator for a larger budget, or wait until it resets",
    "model_not_allowed": "pick one of the allowed models (c.Resolve.model)",
    "upstream_refused_key": "tell the hub's administrator",
}


def service_error(raw: bytes) -> dict[str, Any] | None:
    """The service's own ``{"error": {code, message, ...}}``, when ``raw`` is one."""
    try:
        body = json.loads(raw)
    except ValueError:
        return None
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and error.get("code") in HINTS:
        return error
    return None


class HubProvider(OpenAIProvider):
    """The OpenAI wire to the hub service; ``token`` is this server's hub API token."""

    name = "hub"
    label = "the hub service"

    def __init__(self, service_url: str, token: str | None, model: str, **kw: Any) -> None:
        self.service_url = service_url.rstrip("/") + "/"
        super().__init__(self.service_url + "v1", token, model, api_key_env="", **kw)

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "api_key_env": "JUPYTERHUB_API_TOKEN"}

    def headers(self) -> dict[str, str]:
        headers = {"Accept": "text/event-stream"}
        if self._api_key:
            headers["Authorization"] = f"token {self._api_key}"
        return headers

    def _auth_hint(self) -> str:
        if self._api_key is None:
            return "this server has no $JUPYTERHUB_API_TOKEN: is it running under JupyterHub?"
        return (
            "the hub refused this server's token: the hub's 'server' and 'user' roles need "
            "access:services!service=<name> (see the hub service's docs)"
        )

    def _status_error(
        self, url: str, status: int, raw: bytes, headers: httpx.Headers
    ) -> ProviderError:
        error = service_error(raw)
        if error is None:
            return super()._status_error(url, status, raw, headers)
        said = self._redact(provider_message(raw))
        code = str(error["code"])
        hint = HINTS[code]
        return ProviderError(said, status=status, code=f"hub_{code}", hint=hint, detail=said)

    async def usage(self) -> dict[str, Any]:
        """The user's own usage, from the service's ``GET usage``."""
        url = f"{self.service_url}usage"
        answer = await self._get_json(url, {"Authorization": f"token {self._api_key or ''}"})
        if not isinstance(answer, dict):
            raise ProviderError(f"{self.label} at {url} answered no usage", code="hub_usage")
        return answer


def make_hub_provider(
    settings: Mapping[str, Any],
    model: str,
    families: Mapping[str, Any] | None,
    timeout: float,
    max_retries: int,
    stream_usage: bool,
    reasoning_effort: str,
) -> HubProvider:
    """The provider for ``settings`` {url, token} (make_provider's ``hub``)."""
    from .families import parse_families

    return HubProvider(
        str(settings.get("url") or ""),
        settings.get("token") or None,
        model,
        families=parse_families(families or {}),
        timeout=timeout,
        max_retries=max_retries,
        stream_usage=stream_usage,
        reasoning_effort=reasoning_effort,
    )


def no_usage(provider_name: str) -> dict[str, Any]:
    """What ``GET /resolve/api/usage`` answers when the provider is not the hub."""
    return {"provider": provider_name, "user": None, "day": None, "month": None}


async def usage_of(provider: Any) -> dict[str, Any]:
    """``GET /resolve/api/usage``: the user's usage from the hub service, or nulls."""
    if not isinstance(provider, HubProvider):
        return no_usage(str(getattr(provider, "name", "provider")))
    answer = await provider.usage()
    return {
        "provider": "hub",
        "user": answer.get("user"),
        "day": answer.get("day"),
        "month": answer.get("month"),
    }
