"""The one SSE writer of the gateway's handlers: the public event streams, the OpenAI facade's
stream and the internal inference stream all go out through :class:`SSEWriter`."""

from __future__ import annotations

import contextlib
from typing import Any

from jupyter_server.base.handlers import APIHandler
from tornado import web

from ..contracts.sse import KEEPALIVE, SSE_HEADERS, format_data, format_event


def no_delay(handler: web.RequestHandler) -> None:
    """Small SSE frames must go out at once, not wait for Nagle."""
    stream = getattr(handler.request.connection, "stream", None)
    if stream is not None:
        with contextlib.suppress(Exception):
            stream.set_nodelay(True)


class SSEWriter:
    """Writes one SSE response on ``handler``: headers and no-delay on the first frame (or on
    :meth:`start`), then frames; :meth:`finish` ends the response. A client that goes away shows
    as ``tornado.iostream.StreamClosedError`` from ``handler.flush()``."""

    def __init__(self, handler: web.RequestHandler) -> None:
        self.handler = handler
        self.started = False

    def start(self) -> None:
        """Set the SSE headers (once)."""
        if self.started:
            return
        self.started = True
        for name, value in SSE_HEADERS.items():
            self.handler.set_header(name, value)
        no_delay(self.handler)

    def event(self, seq: int, event_type: str, data: dict[str, Any] | str) -> None:
        """An ``id:``/``event:``/``data:`` frame (the public API's streams; ``data`` may be
        the JSON already encoded)."""
        self.start()
        self.handler.write(format_event(seq, event_type, data))

    def data(self, payload: dict[str, Any] | str) -> None:
        """A bare ``data:`` frame (OpenAI-style streams)."""
        self.start()
        self.handler.write(format_data(payload))

    def raw(self, frames: bytes) -> None:
        """Frames already in SSE form (a provider's, relayed as they came)."""
        self.start()
        self.handler.write(frames)

    def keepalive(self) -> None:
        self.start()
        self.handler.write(KEEPALIVE)

    def finish(self) -> None:
        """End the response (as SSE even when no frame was written)."""
        self.start()
        if isinstance(self.handler, APIHandler):
            self.handler.finish(set_content_type=SSE_HEADERS["Content-Type"])
        else:
            self.handler.finish()
