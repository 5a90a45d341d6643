"""What the HTTP providers share: one httpx client, retries before the first byte, the mapping
of HTTP failures to :class:`ProviderError`, and SSE reading.

A failure before the stream starts is answered by status: 401/403 ``provider_auth``, 404
``provider_not_found``, 429 ``provider_rate_limited`` and 5xx (and 529) ``provider_server_error``
are retried with exponential backoff (Retry-After honoured, capped), other 4xx
``provider_rejected``; a refused connection is ``provider_unreachable`` (502) and a timeout
``provider_timeout`` (504). Every message carries the provider's own words, with the key
blanked out should the provider echo it.
"""

from __future__ import annotations

import asyncio
import email.utils
import ipaddress
import json
import time
from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Any
from urllib.parse import urlsplit

import httpx

from ..contracts.errors import ProviderError
from ..contracts.sse import SSEDecoder, SSEEvent
from .base import Provider
from .raw_http import (
    ConnectionPool,
    RawHTTPError,
    RawResponse,
    RawTimeout,
    raw_post,
    usable_raw,
)

RETRYABLE = frozenset({429, 500, 502, 503, 504, 529})
MAX_JSON_ANSWER = 64 * 1024 * 1024  # a whole completion from a server that did not stream


def is_loopback(url: str) -> bool:
    """True for http(s)://localhost or a loopback address (those never go through a proxy)."""
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def provider_message(raw: bytes) -> str:
    """The provider's own words from an error body: ``error.message`` when it is JSON."""
    text = raw.decode("utf-8", errors="replace").strip()
    try:
        obj = json.loads(text)
    except ValueError:
        return text[:500] or "(empty body)"
    if isinstance(obj, dict):
        error = obj.get("error", obj)
        if isinstance(error, dict):
            for key in ("message", "detail", "type"):
                if isinstance(error.get(key), str) and error[key]:
                    return str(error[key])[:500]
        elif isinstance(error, str) and error:
            return error[:500]
    return text[:500]


def retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class HTTPProvider(Provider):
    """Base of the providers that speak HTTP + SSE to a model server."""

    label = "provider"
    # stream plain-HTTP answers over asyncio (raw_http), not httpx: see raw_http's docstring
    stream_raw = True

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str | None,
        model: str,
        api_key_env: str = "",
        timeout: float = 120,
        max_retries: int = 3,
        backoff_base: float = 0.5,
        backoff_cap: float = 8.0,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key_env = api_key_env
        self.timeout = timeout
        self.max_retries = max(0, max_retries)
        self.backoff_base = backoff_base
        self.backoff_cap = backoff_cap
        self._api_key = api_key or None
        self._client: httpx.AsyncClient | None = None
        self._raw_pool = ConnectionPool()  # kept-alive connections of the plain-HTTP path

    # -- what subclasses provide -------------------------------------------------------------

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "model": self.model,
            "base_url": self.base_url,
            "api_key_env": self.api_key_env,
            "api_key_set": self._api_key is not None,
        }

    async def aclose(self) -> None:
        self._raw_pool.close()
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    # -- shared machinery --------------------------------------------------------------------

    def _redact(self, text: str) -> str:
        if self._api_key and len(self._api_key) >= 4:
            text = text.replace(self._api_key, "***")
        return text

    def _client_for(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(
                timeout=httpx.Timeout(self.timeout, connect=min(self.timeout, 10.0)),
                trust_env=not is_loopback(self.base_url),
            )
        return self._client

    def _auth_hint(self) -> str:
        if self._api_key is None:
            where = (
                f"the environment variable {self.api_key_env}"
                if self.api_key_env
                else ("the variable named by c.Resolve.api_key_env")
            )
            return f"no API key is set: export it in {where}"
        if self.api_key_env:
            return f"check the API key in the environment variable {self.api_key_env}"
        return "check the API key (c.Resolve.api_key_env names the variable holding it)"

    def _status_error(
        self, url: str, status: int, raw: bytes, headers: httpx.Headers
    ) -> ProviderError:
        said = self._redact(provider_message(raw))
        message = f"{self.label} at {url} answered {status}: {said}"
        if status in (401, 403):
            hint = self._auth_hint()
            return ProviderError(
                message, status=status, code="provider_auth", hint=hint, detail=said
            )
        if status == 404:
            return ProviderError(
                message,
                status=404,
                code="provider_not_found",
                hint="check c.Resolve.model and c.Resolve.base_url",
                detail=said,
            )
        if status == 429:
            return ProviderError(
                message,
                status=429,
                detail=said,
                code="provider_rate_limited",
                retryable=True,
                retry_after=retry_after(headers.get("retry-after")),
                hint="the provider is rate limiting: wait a little, or lower the request rate",
            )
        if status in RETRYABLE or status >= 500:
            return ProviderError(
                message,
                status=status,
                code="provider_server_error",
                retryable=True,
                retry_after=retry_after(headers.get("retry-after")),
                hint="the provider failed or is overloaded; try again later",
                detail=said,
            )
        return ProviderError(
            message,
            status=status,
            code="provider_rejected",
            detail=said,
            hint="the provider rejected the request; if it rejects stream_options, "
            "set c.Resolve.stream_usage = False",
        )

    def _unreachable(self, url: str, exc: Exception) -> ProviderError:
        why = self._redact(str(exc)) or type(exc).__name__
        return ProviderError(
            f"cannot reach {self.label} at {url}: {why}",
            status=502,
            code="provider_unreachable",
            retryable=True,
            hint="check c.Resolve.base_url and that the server is running",
            detail=why,
        )

    def _timeout(self, url: str, exc: Exception) -> ProviderError:
        return ProviderError(
            f"{self.label} at {url} did not answer within {self.timeout:g} s "
            f"({type(exc).__name__})",
            status=504,
            code="provider_timeout",
            retryable=True,
            hint="check that the server is up and the model is loaded, or raise the timeout",
        )

    def _backoff(self, attempt: int, after: float | None) -> float:
        delay = after if after is not None else self.backoff_base * (2**attempt)
        return max(0.0, min(delay, self.backoff_cap))

    async def _retry_after(self, error: ProviderError, attempt: int) -> None:
        """Wait before the next attempt, or raise ``error`` when it is not one to retry or the
        retries are spent."""
        if not error.retryable or attempt >= self.max_retries:
            if attempt:
                error.message = f"{error.message} (after {attempt + 1} attempts)"
                error.args = (error.message,)
            raise error
        await asyncio.sleep(self._backoff(attempt, error.retry_after))

    def _json_answer(self, url: str, raw: bytes) -> dict[str, Any] | None:
        """A whole JSON answer (a server that ignored ``stream: true``); None if not an object."""
        try:
            body = json.loads(raw)
        except ValueError as exc:
            raise ProviderError(
                f"{self.label} at {url} sent JSON that does not parse",
                code="provider_stream_error",
            ) from exc
        return body if isinstance(body, dict) else None

    async def _open(
        self, url: str, headers: dict[str, str], payload: dict[str, Any]
    ) -> httpx.Response:
        """POST and return the streaming response once it has a 2xx status, retrying 429/5xx."""
        client = self._client_for()
        attempt = 0
        while True:
            request = client.build_request("POST", url, json=payload, headers=headers)
            try:
                response = await client.send(request, stream=True)
                if response.status_code < 400:
                    return response
                try:
                    raw = await response.aread()
                finally:
                    await response.aclose()
            except httpx.TimeoutException as exc:
                raise self._timeout(url, exc) from exc
            except httpx.TransportError as exc:
                raise self._unreachable(url, exc) from exc
            error = self._status_error(url, response.status_code, raw, response.headers)
            await self._retry_after(error, attempt)
            attempt += 1

    async def _open_raw(
        self, url: str, headers: dict[str, str], payload: dict[str, Any]
    ) -> RawResponse:
        """:meth:`_open` over :mod:`.raw_http`: the same retries and the same errors."""
        body = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()
        attempt = 0
        while True:
            try:
                response = await raw_post(
                    url,
                    headers,
                    body,
                    connect_timeout=min(self.timeout, 10.0),
                    read_timeout=self.timeout,
                    pool=self._raw_pool,
                )
                if response.status < 400:
                    return response
                try:
                    raw = await response.read()
                finally:
                    await response.aclose()
            except RawTimeout as exc:
                raise self._timeout(url, exc) from exc
            except RawHTTPError as exc:
                raise self._unreachable(url, exc) from exc
            error = self._status_error(url, response.status, raw, httpx.Headers(response.headers))
            await self._retry_after(error, attempt)
            attempt += 1

    async def _raw_pieces(
        self, url: str, headers: dict[str, str], payload: dict[str, Any]
    ) -> AsyncGenerator[bytes | dict[str, Any], None]:
        response = await self._open_raw(url, headers, payload)
        try:
            try:
                if "application/json" in (response.header("content-type") or ""):
                    body = self._json_answer(url, await response.read(MAX_JSON_ANSWER))
                    if body is not None:
                        yield body
                    return
                async for piece in response.pieces():
                    yield piece
            except RawTimeout as exc:
                raise self._timeout(url, exc) from exc
            except RawHTTPError as exc:
                raise ProviderError(
                    f"the stream from {self.label} at {url} broke off: {self._redact(str(exc))}",
                    code="provider_stream_error",
                    hint="the connection to the provider was lost mid-answer; try again",
                ) from exc
        finally:
            await response.aclose()

    async def _get_json(self, url: str, headers: dict[str, str]) -> Any:
        """GET a JSON document (a model list); failures map as for a completion, no retries."""
        client = self._client_for()
        try:
            response = await client.get(url, headers={**headers, "Accept": "application/json"})
        except httpx.TimeoutException as exc:
            raise self._timeout(url, exc) from exc
        except httpx.TransportError as exc:
            raise self._unreachable(url, exc) from exc
        if response.status_code >= 400:
            raise self._status_error(url, response.status_code, response.content, response.headers)
        try:
            return response.json()
        except ValueError as exc:
            raise ProviderError(
                f"{self.label} at {url} answered something that is not JSON",
                code="provider_rejected",
            ) from exc

    async def _events(
        self, url: str, headers: dict[str, str], payload: dict[str, Any]
    ) -> AsyncGenerator[SSEEvent | dict[str, Any], None]:
        """The SSE events of the answer; a plain JSON answer (a server that ignored
        ``stream: true``) is yielded as one dict."""
        decoder = SSEDecoder()
        async with aclosing(self._pieces(url, headers, payload)) as pieces:
            async for piece in pieces:
                if isinstance(piece, dict):
                    yield piece
                    return
                for event in decoder.feed(piece):
                    yield event
        for event in decoder.close():
            yield event

    async def _pieces(
        self, url: str, headers: dict[str, str], payload: dict[str, Any]
    ) -> AsyncGenerator[bytes | dict[str, Any], None]:
        """The answer's body as the network delivers it; a plain JSON answer (a server that
        ignored ``stream: true``) is yielded as one dict."""
        if self.stream_raw and usable_raw(url, is_loopback(url)):
            async with aclosing(self._raw_pieces(url, headers, payload)) as pieces:
                async for piece in pieces:
                    yield piece
            return
        response = await self._open(url, headers, payload)
        try:
            content_type = response.headers.get("content-type", "")
            if "application/json" in content_type:
                raw = await response.aread()
                body = self._json_answer(url, raw)
                if body is not None:
                    yield body
                return
            try:
                async for piece in response.aiter_bytes():
                    yield piece
            except httpx.TimeoutException as exc:
                raise self._timeout(url, exc) from exc
            except httpx.TransportError as exc:
                raise ProviderError(
                    f"the stream from {self.label} at {url} broke off: "
                    f"{self._redact(str(exc)) or type(exc).__name__}",
                    code="provider_stream_error",
                    hint="the connection to the provider was lost mid-answer; try again",
                ) from exc
        finally:
            await response.aclose()
