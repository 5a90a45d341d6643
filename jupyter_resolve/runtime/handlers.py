"""The runtime's calls back into the gateway, for agent-httpd only: inference and tool calls.

Served on the gateway's own loopback listener; every request must come from loopback and carry
the runtime's launch token. Nothing here is reachable through the Jupyter server's port.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
from typing import Any, Protocol

from pydantic import ValidationError
from tornado import web
from tornado.iostream import StreamClosedError
from tornado.log import access_log

from ..contracts.bodies import ToolCallRequest
from ..contracts.errors import BadRequest, ProviderError, ResolveError
from ..handlers.errors import AnswersQuietly, raised, validation_message, write_resolve_error
from ..handlers.flushing import BurstFlusher
from ..handlers.streaming import SSEWriter
from ..providers.base import Provider
from ..providers.reachability import ProviderHealth
from ..providers.wire_names import chunk_from_wire, request_to_wire, stable_order
from ..runs.manager import RunManager


class InternalHost(Protocol):
    """What the internal endpoints need: the launch token, the provider (and what its calls
    say about it), and the runs (which own their rounds' fitting, their notes and their tool
    calls)."""

    runtime_token: str
    provider: Provider
    provider_health: ProviderHealth
    runs: RunManager


class InternalHandler(AnswersQuietly):
    """Base: loopback peers with the launch token only; JSON errors."""

    host: InternalHost

    def initialize(self, host: InternalHost) -> None:
        self.host = host

    def prepare(self) -> None:
        peer = self.request.remote_ip or ""
        try:
            loopback = ipaddress.ip_address(peer).is_loopback
        except ValueError:
            loopback = False
        if not loopback:
            raise web.HTTPError(403, "internal endpoints answer loopback peers only")
        header = self.request.headers.get("Authorization", "")
        expected = f"Bearer {self.host.runtime_token}"
        if not hmac.compare_digest(header.encode(), expected.encode()):
            raise web.HTTPError(401, "this endpoint needs the runtime's launch token")

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        exc = raised(kwargs)
        if isinstance(exc, ResolveError):
            return write_resolve_error(self, exc)
        reason = self._reason
        if isinstance(exc, web.HTTPError) and exc.log_message:
            reason = exc.log_message
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps({"error": {"code": f"http_{status_code}", "message": reason}}))

    def json_body(self) -> Any:
        try:
            return json.loads(self.request.body or b"null")
        except ValueError as exc:
            raise BadRequest(f"body is not JSON: {exc}") from exc


class InferenceHandler(InternalHandler):
    """OpenAI chat completions in, the provider's stream out (as clean ``data:`` frames)."""

    async def post(self) -> None:
        body = self.json_body()
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            raise BadRequest("messages: must be a list of chat messages")
        run_id = self.request.headers.get("X-Resolve-Run-Id")
        runs = self.host.runs
        notes = runs.notes
        run = runs.held(run_id) if run_id else None
        held = run.notes if run is not None else None  # the run's own
        # the runtime rebuilds a tool-use turn without its thinking blocks: they go back on;
        # then the round is fitted to the run's window
        restored = notes.restore(held, body)
        size = len(self.request.body) if restored is body else None  # blocks came back: count
        body = stable_order(runs.fit_round(run_id, restored, size))
        body, names_back = request_to_wire(body)
        watch = notes.watch(held, str(body.get("model") or ""))
        provider = self.host.provider
        stream = provider.relay(body, run_id)
        sse = SSEWriter(self)
        flusher = BurstFlusher(self)
        try:
            async for chunk in stream:
                if isinstance(chunk, bytes):
                    sse.raw(chunk)  # the provider's own frames, which need nothing of ours
                else:
                    sse.data(chunk_from_wire(watch(chunk), names_back))
                await flusher.wrote()
                if flusher.closed:
                    return
            sse.data("[DONE]")
            flusher.cancel()
            sse.finish()
            self.host.provider_health.succeeded(provider)
        except ProviderError as exc:
            # logged with its reason; the runtime (so the run's one run.error) gets plain words
            exc.plain = self.host.provider_health.failed(provider, exc, run_id)
            notes.failed(held, exc.code)  # the run's run.error carries the provider's code
            if not sse.started:
                raise  # answered as JSON with the provider's status (write_error)
            sse.data(exc.to_json())
            flusher.cancel()
            sse.finish()
        except StreamClosedError:
            return
        finally:
            flusher.cancel()
            await stream.aclose()  # type: ignore[attr-defined]


class ToolCallHandler(InternalHandler):
    """``POST /resolve/internal/tools``: one tool call of a run."""

    async def post(self) -> None:
        try:
            request = ToolCallRequest.model_validate(self.json_body())
        except ValidationError as exc:
            raise BadRequest(validation_message(exc)) from exc
        result = await self.host.runs.call_tool(request)
        self.set_header("Content-Type", "application/json")
        self.finish(result.model_dump_json())


def log_request(handler: web.RequestHandler) -> None:
    """The internal listener's access log: an answered call at debug level, as jupyter_server
    logs its own API (one line per round and per tool call at info was the log's noise), a
    refused one as a warning, a failed one as an error."""
    status = handler.get_status()
    level = logging.DEBUG if status < 400 else logging.WARNING if status < 500 else logging.ERROR
    if access_log.isEnabledFor(level):
        request = handler.request
        ms = 1000.0 * request.request_time()
        access_log.log(level, "%d %s %s %.2fms", status, request.method, request.uri, ms)


def internal_routes(
    host: InternalHost,
) -> list[tuple[str, type[web.RequestHandler], dict[str, Any]]]:
    args = {"host": host}
    return [
        (r"/resolve/internal/v1/chat/completions", InferenceHandler, args),
        (r"/resolve/internal/tools", ToolCallHandler, args),
    ]
