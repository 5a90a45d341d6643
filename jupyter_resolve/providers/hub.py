"""``c.Resolve.provider = "hub"``: the organization's hub service holds the keys.

The requests are the OpenAI provider's, sent to ``<hub_service_url>v1`` with the user's own hub
API token instead of a provider key (``jupyter_resolve.hub`` checks it with JupyterHub, applies
the user's models and budgets, and forwards upstream). What the service refuses is said in its
own words, with its own code and advice: over budget (``budget_exceeded``) its 429 names the
limit and when it resets, and is not retried (waiting a few seconds does not help); a model the
administrator did not allow is its 403; too many requests in flight is retried.

While the service is down or restarting (nothing answers, or the hub's proxy answers 502/503/504
with a page of its own), a request is retried with backoff, then fails with one plain sentence,
never the proxy's HTML. A stream that stops before its end (the service died mid-answer) is an
error, not a quiet stop; so is an answer that, once begun, is silent for
``c.Resolve.hub_stream_timeout`` seconds: the service says something every 15 s of a quiet
answer, and a proxy between (JupyterHub's) may keep a dead replica's connection open, which
``c.Resolve.provider_timeout`` (the wait for the answer's start) would notice only much later.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, Mapping
from contextlib import aclosing
from typing import Any

import httpx

from ..contracts.errors import ProviderError
from .openai import OpenAIProvider

NOT_ANSWERING = "the hub's model service is not answering; try again in a minute"
CUT = "the hub's model service stopped in the middle of the answer; try again in a minute"
STREAM_TIMEOUT = 45.0  # three of the service's 15 s keep-alives missed
ADVICE = {  # the service's own refusals: what the person can do about each
    "budget_exceeded": "ask the hub's administrator for a larger budget, or wait until it resets",
    "model_not_allowed": "pick one of the allowed models (c.Resolve.model)",
    "model_unpriced": "pick a model with a price, or ask the hub's administrator to price it",
    "too_many_requests": "wait for one of your other requests to finish",
    "upstream_refused_key": "tell the hub's administrator",
    "upstream_unreachable": "the model provider behind the hub is not answering; try again later",
    "too_large": "the conversation is too large for the hub service; start a new session",
}
RETRIED = frozenset({"too_many_requests", "upstream_unreachable"})
DOWN = frozenset({502, 503, 504})
DONE_MARK = b"[DONE]"


def service_error(raw: bytes) -> dict[str, Any] | None:
    """The service's own ``{"error": {code, message, ...}}``, when ``raw`` is one."""
    try:
        body = json.loads(raw)
    except ValueError:
        return None
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and error.get("code") in ADVICE:
        return error
    return None


def is_json(raw: bytes) -> bool:
    try:
        json.loads(raw)
    except ValueError:
        return False
    return True


class HubProvider(OpenAIProvider):
    """The OpenAI wire to the hub service; ``token`` is this server's hub API token."""

    name = "hub"
    label = "the hub service"

    def __init__(
        self,
        service_url: str,
        token: str | None,
        model: str,
        stream_timeout: float = STREAM_TIMEOUT,
        **kw: Any,
    ) -> None:
        self.service_url = service_url.rstrip("/") + "/"
        self.stream_timeout = stream_timeout
        kw.setdefault("backoff_base", 1.0)  # 1, 2, 4 s: a restart of a few seconds is ridden out
        kw.setdefault("backoff_cap", 4.0)
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

    def _not_answering(self, detail: str) -> ProviderError:
        return ProviderError(
            NOT_ANSWERING, status=503, code="hub_unavailable", retryable=True, detail=detail
        )

    def _timeout(self, url: str, exc: Exception) -> ProviderError:
        """Nothing for ``timeout`` seconds: the service sends a comment every 15 s of a quiet
        stream, so this silence is a service (or a connection) that is gone."""
        error = self._not_answering(f"{url}: nothing for {self.timeout:g} s")
        error.code = "hub_timeout"
        return error

    def _unreachable(self, url: str, exc: Exception) -> ProviderError:
        return self._not_answering(self._redact(str(exc)) or type(exc).__name__)

    def _status_error(
        self, url: str, status: int, raw: bytes, headers: httpx.Headers
    ) -> ProviderError:
        error = service_error(raw)
        if error is not None:
            code = str(error["code"])
            said = self._redact(str(error.get("message") or code))
            return ProviderError(
                f"{said} ({ADVICE[code]})",
                status=status,
                code=code,
                hint=ADVICE[code],
                detail=said,
                retryable=code in RETRIED,
                retry_after=1.0 if code == "too_many_requests" else None,
            )
        if status in DOWN:
            return self._not_answering(f"{url} answered {status}")
        if not is_json(raw):  # the hub's or its proxy's page, never shown as it is
            return ProviderError(
                f"the hub answered {status} at {url} instead of its model service; check "
                "c.Resolve.hub_service_url and c.Resolve.hub_service_name",
                status=502 if status < 400 else status,
                code="hub_not_found" if status == 404 else "hub_error",
            )
        return super()._status_error(url, status, raw, headers)

    async def _pieces(
        self, url: str, headers: dict[str, str], payload: dict[str, Any]
    ) -> AsyncGenerator[bytes | dict[str, Any], None]:
        """The answer's pieces; a stream that ends without ``[DONE]`` is an error (the service
        writes it at every stream's end, so its absence means the answer was cut)."""
        tail, begun = b"", False
        async with aclosing(super()._pieces(url, headers, payload)) as pieces:
            while True:
                try:
                    piece = await self._next_piece(pieces, begun)
                except StopAsyncIteration:
                    break
                except asyncio.TimeoutError:
                    silent = f"{url}: nothing for {self.stream_timeout:g} s mid-answer"
                    raise ProviderError(CUT, code="hub_stream_silent", detail=silent) from None
                if isinstance(piece, dict):
                    yield piece
                    return
                begun = True
                tail = (tail + piece)[-64:]
                yield piece
                if DONE_MARK in tail:
                    return
        raise ProviderError(CUT, code="hub_stream_cut", detail=f"{url}: the stream ended early")

    async def _next_piece(
        self, pieces: AsyncGenerator[bytes | dict[str, Any], None], begun: bool
    ) -> bytes | dict[str, Any]:
        """The next piece; once the answer has begun, within ``stream_timeout`` (keep-alive
        comments count: they are pieces too)."""
        if not begun or self.stream_timeout <= 0:
            return await pieces.__anext__()
        return await asyncio.wait_for(pieces.__anext__(), self.stream_timeout)

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
    """The provider for ``settings`` {url, token, stream_timeout?} (make_provider's ``hub``)."""
    from .families import parse_families

    return HubProvider(
        str(settings.get("url") or ""),
        settings.get("token") or None,
        model,
        stream_timeout=float(settings.get("stream_timeout", STREAM_TIMEOUT)),
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
