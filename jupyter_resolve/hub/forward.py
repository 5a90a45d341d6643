"""The service's way upstream: an OpenAI- or Anthropic-compatible server and the key for it.

:class:`Upstream` is one configured upstream (a provider's base URL, or a LiteLLM proxy the
organization runs, and the key from the service's own environment). :func:`relay` sends one
request and hands each piece of the answer to a writer as it arrives (a stream is passed
through byte for byte, never re-framed), while :class:`UsageWatch` reads the same bytes for the
``usage`` the upstream reports. A client that hangs up stops the writing, not the reading: the
rest of the answer is read (for at most ``hangup_timeout`` seconds) so its usage can be charged.
While a stream's upstream is silent (a model thinking), an SSE comment goes out every
``keepalive`` seconds, so a client can tell a quiet answer from a connection that died (a proxy
between, such as JupyterHub's, may leave the latter open).
Nothing here knows about users or budgets.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx

from ..contracts.sse import DONE, SSEDecoder
from ..providers.raw_http import ConnectionPool
from .budgets import Used
from .opening import Opened, UpstreamUnreachable, open_upstream

Wire = Literal["openai", "anthropic"]
PASSED_HEADERS = ("anthropic-version", "anthropic-beta")


@dataclass
class Upstream:
    """``base_url``: for OpenAI the part before ``/chat/completions`` (``.../v1``); for
    Anthropic the part before ``/v1/messages``."""

    wire: Wire
    base_url: str
    key: str | None = field(default=None, repr=False)

    def url(self, path: str = "") -> str:
        """Where a request goes: ``path`` after the base (OpenAI: ``/chat/completions`` by
        default, or ``/completions``); Anthropic's is always ``/v1/messages``."""
        base = self.base_url.rstrip("/")
        if self.wire == "anthropic":
            return f"{base}/v1/messages"
        return f"{base}{path or '/chat/completions'}"

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
        self.done = False  # an OpenAI stream's [DONE] came

    def feed(self, piece: bytes, streamed: bool) -> None:
        self.streamed = streamed
        if not streamed:
            self.raw += piece
            return
        for event in self.decoder.feed(piece):
            self._frame(event.data)

    def _frame(self, data: str) -> None:
        if data.strip() == DONE:
            self.done = True
            return
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


Writer = Callable[[bytes], Awaitable[bool]]  # False: the client is gone
KEEPALIVE = b": keep-alive\n\n"  # an SSE comment: every client skips it
Starter = Callable[[int, str], None]


@dataclass
class Relayed:
    """How a relay ended: the upstream's status; ``finished``: its answer was read to the end;
    ``client_gone``: the client hung up before the end."""

    status: int
    finished: bool = True
    client_gone: bool = False


async def refused_key(upstream: Upstream, opened: Opened, start: Starter, write: Writer) -> None:
    """The upstream refused the service's key: the user cannot fix that, the admin can (a
    401 passed through would read as the user's token being refused)."""
    said = upstream.redact((await opened.read()).decode("utf-8", "replace"))[:300]
    message = (
        f"the upstream at {upstream.url()} refused the hub service's key "
        f"({opened.status}: {' '.join(said.split())}); the hub's administrator must "
        f"check the key in the service's environment"
    )
    body = {"error": {"code": "upstream_refused_key", "message": message}}
    start(502, "application/json")
    await write(json.dumps(body).encode())


async def _with_keepalives(pieces: AsyncIterator[bytes], every: float) -> AsyncIterator[bytes]:
    """``pieces``, and an empty piece each time ``every`` seconds pass without one (0: never)."""
    if every <= 0:
        async for piece in pieces:
            yield piece
        return
    waiting: asyncio.Future[bytes] | None = None
    try:
        while True:
            if waiting is None:
                waiting = asyncio.ensure_future(pieces.__anext__())
            done, _ = await asyncio.wait({waiting}, timeout=every)
            if not done:
                yield b""
                continue
            finished, waiting = waiting, None
            try:
                piece = finished.result()
            except StopAsyncIteration:
                return
            yield piece
    finally:
        if waiting is not None:
            waiting.cancel()


async def _drain(pieces: AsyncIterator[bytes], watch: UsageWatch, streamed: bool) -> None:
    async for piece in pieces:
        if piece:
            watch.feed(piece, streamed)


async def relay(
    connection: tuple[httpx.AsyncClient, ConnectionPool],
    upstream: Upstream,
    request: tuple[str, dict[str, Any]],
    incoming: dict[str, str],
    *,
    start: Starter,
    write: Writer,
    watch: UsageWatch,
    hangup_timeout: float,
    keepalive: float = 0.0,
) -> Relayed:
    """POST ``request`` (a path and a body) upstream; ``start(status, content_type)`` once the
    answer's head is in, then ``write`` each piece as it arrives (and ``watch`` reads it)."""
    path, body = request
    url = upstream.url(path)
    try:
        opened = await open_upstream(*connection, url, upstream.headers(incoming), body)
    except UpstreamUnreachable as exc:
        exc.message = upstream.redact(exc.message)
        raise
    try:
        if opened.status in (401, 403):
            await refused_key(upstream, opened, start, write)
            return Relayed(502)
        status = opened.status
        streamed = status < 400 and "text/event-stream" in opened.content_type
        start(status, opened.content_type)
        pieces = _with_keepalives(opened.pieces, keepalive if streamed else 0.0)
        async for piece in pieces:
            if not piece:  # the upstream said nothing for a while: say the line is alive
                piece = KEEPALIVE
            elif status >= 400:  # an error body: the key blanked should the upstream echo it
                piece = upstream.redact(piece.decode("utf-8", "replace")).encode()
            else:
                watch.feed(piece, streamed)
            if not await write(piece):
                break
        else:
            if streamed and upstream.wire == "openai" and not watch.done:
                await write(b"data: [DONE]\n\n")  # the end, said as clients expect it
            return Relayed(status)
        try:  # the client hung up: read on (bounded) for the usage to charge
            await asyncio.wait_for(_drain(pieces, watch, streamed), hangup_timeout)
        except asyncio.TimeoutError:
            return Relayed(status, finished=False, client_gone=True)
        return Relayed(status, client_gone=True)
    finally:
        await opened.close()
