"""The service's way upstream: an OpenAI- or Anthropic-compatible server and the key for it.

:class:`Upstream` is one configured upstream (a provider's base URL, or a LiteLLM proxy the
organization runs, and the key from the service's own environment). :func:`relay` sends one
request and hands each piece of the answer to a writer as it arrives (a stream is passed
through byte for byte, never re-framed), while :class:`UsageWatch` reads the same bytes for the
``usage`` the upstream reports. Nothing here knows about users or budgets.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx

from ..contracts.sse import SSEDecoder
from .budgets import Used

Wire = Literal["openai", "anthropic"]
PASSED_HEADERS = ("anthropic-version", "anthropic-beta")


@dataclass
class Upstream:
    """``base_url``: for OpenAI the part before ``/chat/completions`` (``.../v1``); for
    Anthropic the part before ``/v1/messages``."""

    wire: Wire
    base_url: str
    key: str | None = field(default=None, repr=False)

    def url(self) -> str:
        base = self.base_url.rstrip("/")
        return f"{base}/chat/completions" if self.wire == "openai" else f"{base}/v1/messages"

    def models_url(self) -> str:
        return f"{self.base_url.rstrip('/')}/models"

    def headers(self, incoming: dict[str, str]) -> dict[str, str]:
        """The upstream's headers: its key, the content type, Anthropic's version headers."""
        headers = {"Content-Type": "application/json", "Accept-Encoding": "identity"}
        if self.wire == "openai":
            if self.key:
                headers["Authorization"] = f"Bearer {self.key}"
            return headers
        headers["anthropic-version"] = "2023-06-01"
        for name in PASSED_HEADERS:
            if incoming.get(name):
                headers[name] = incoming[name]
        if self.key:
            headers["x-api-key"] = self.key
        return headers

    def redact(self, text: str) -> str:
        """``text`` with the key blanked out, should the upstream echo it."""
        return text.replace(self.key, "***") if self.key and len(self.key) >= 4 else text


def _int(value: Any) -> int:
    return int(value) if isinstance(value, (int, float)) else 0


class UsageWatch:
    """Reads an answer's bytes (SSE or one JSON body) for the tokens the upstream reports."""

    def __init__(self, wire: Wire) -> None:
        self.wire = wire
        self.decoder = SSEDecoder()
        self.prompt = 0
        self.completion = 0
        self.raw = bytearray()  # a JSON answer, read whole (bounded by the upstream's answer)
        self.streamed = False

    def feed(self, piece: bytes, streamed: bool) -> None:
        self.streamed = streamed
        if not streamed:
            self.raw += piece
            return
        for event in self.decoder.feed(piece):
            self._frame(event.data)

    def _frame(self, data: str) -> None:
        try:
            obj = json.loads(data)
        except ValueError:
            return  # [DONE], a keep-alive
        if isinstance(obj, dict):
            self._read(obj)

    def _read(self, obj: dict[str, Any]) -> None:
        if self.wire == "openai":
            usage = obj.get("usage")
            if isinstance(usage, dict):
                self.prompt = _int(usage.get("prompt_tokens"))
                self.completion = _int(usage.get("completion_tokens"))
            return
        message = obj.get("message") if obj.get("type") == "message_start" else obj
        usage = message.get("usage") if isinstance(message, dict) else None
        if not isinstance(usage, dict):
            usage = obj.get("usage") if isinstance(obj.get("usage"), dict) else None
        if usage is None:
            return
        prompt = sum(
            _int(usage.get(k))
            for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        )
        self.prompt = max(self.prompt, prompt)  # message_delta repeats or omits the input
        self.completion = max(self.completion, _int(usage.get("output_tokens")))

    def used(self) -> Used:
        if not self.streamed and self.raw:
            try:
                obj = json.loads(bytes(self.raw))
            except ValueError:
                obj = None
            if isinstance(obj, dict):
                self._read(obj)
            self.raw.clear()
        return Used(self.prompt, self.completion)


Writer = Callable[[bytes], Awaitable[None]]
Starter = Callable[[int, str], None]


class UpstreamUnreachable(Exception):
    """The upstream could not be reached or broke off; the message is safe to show."""


async def refused_key(
    upstream: Upstream, response: httpx.Response, start: Starter, write: Writer
) -> None:
    """The upstream refused the service's key: the user cannot fix that, the admin can (a
    401 passed through would read as the user's token being refused)."""
    said = upstream.redact((await response.aread()).decode("utf-8", "replace"))[:300]
    message = (
        f"the upstream at {upstream.url()} refused the hub service's key "
        f"({response.status_code}: {' '.join(said.split())}); the hub's administrator must "
        f"check the key in the service's environment"
    )
    body = {"error": {"code": "upstream_refused_key", "message": message}}
    start(502, "application/json")
    await write(json.dumps(body).encode())


async def relay(
    client: httpx.AsyncClient,
    upstream: Upstream,
    body: dict[str, Any],
    incoming: dict[str, str],
    *,
    start: Starter,
    write: Writer,
    watch: UsageWatch,
) -> int:
    """POST ``body`` upstream; ``start(status, content_type)`` once the answer's head is in,
    then ``write`` each piece as it arrives (and ``watch`` reads it). Returns the status."""
    request = client.build_request(
        "POST", upstream.url(), json=body, headers=upstream.headers(incoming)
    )
    try:
        response = await client.send(request, stream=True)
    except httpx.HTTPError as exc:
        why = upstream.redact(str(exc)) or type(exc).__name__
        raise UpstreamUnreachable(f"cannot reach the upstream at {upstream.url()}: {why}") from exc
    try:
        if response.status_code in (401, 403):
            await refused_key(upstream, response, start, write)
            return 502
        content_type = response.headers.get("content-type", "application/json")
        streamed = response.status_code < 400 and "text/event-stream" in content_type
        start(response.status_code, content_type)
        try:
            async for piece in response.aiter_bytes():
                if response.status_code < 400:
                    watch.feed(piece, streamed)
                    await write(piece)
                else:  # an error body: the key blanked should the upstream echo it
                    await write(upstream.redact(piece.decode("utf-8", "replace")).encode())
        except httpx.HTTPError as exc:
            raise UpstreamUnreachable(
                f"the upstream at {upstream.url()} broke off: {type(exc).__name__}"
            ) from exc
        return response.status_code
    finally:
        await response.aclose()
