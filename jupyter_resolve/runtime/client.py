"""Client of agent-httpd: ``POST /chat`` streamed as frame payloads, cancel, steering messages,
health.

``/chat`` is spoken over a plain asyncio connection, not httpx: the peer is our own runtime on
loopback, whose answer is a close-delimited SSE stream (``Connection: close``, no chunking), so
reading it needs no HTTP client, and an HTTP client's per-read work was a good part of the
gateway's CPU per chunk. The rarer calls (cancel, health) keep httpx.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit

import httpx

from ..contracts.bodies import AgentChatBody
from ..contracts.errors import RuntimeGone, RuntimeRejected
from ..contracts.frames import FrameReader

HEAD_MAX = 16 * 1024  # the runtime's response head is a few lines
ERROR_BODY_MAX = 64 * 1024
READ_SIZE = 256 * 1024


class RuntimeClient:
    """Talks to one running agent-httpd at ``base_url`` with its launch token."""

    def __init__(self, base_url: str, token: str) -> None:
        self.base_url = base_url
        parts = urlsplit(base_url)
        self._host = parts.hostname or "127.0.0.1"
        self._port = parts.port or 80
        self._auth = f"Authorization: Bearer {token}\r\n".encode()
        self._client = httpx.AsyncClient(
            base_url=base_url,
            headers={"Authorization": f"Bearer {token}"},
            timeout=httpx.Timeout(10.0, read=None),
            limits=httpx.Limits(max_connections=1000, max_keepalive_connections=20),
            trust_env=False,
        )

    async def chat(self, body: AgentChatBody) -> AsyncIterator[list[bytes]]:
        """Yield the payloads of the run's frames, those of one read at a time."""
        content = body.model_dump_json().encode()
        try:
            reader, writer = await asyncio.open_connection(self._host, self._port, limit=HEAD_MAX)
        except OSError as exc:
            raise RuntimeGone(f"{type(exc).__name__}: {exc}") from exc
        try:
            writer.write(
                b"POST /chat HTTP/1.1\r\nHost: %s:%d\r\n%sContent-Type: application/json\r\n"
                b"Content-Length: %d\r\nConnection: close\r\n\r\n"
                % (self._host.encode(), self._port, self._auth, len(content))
                + content  # one write: head and body in one segment
            )
            head = await reader.readuntil(b"\r\n\r\n")
            status = _status(head)
            if status != 200:
                text = (await reader.read(ERROR_BODY_MAX)).decode(errors="replace")
                raise RuntimeRejected(status, text[:500])
            frames = FrameReader()
            while piece := await reader.read(READ_SIZE):
                payloads = frames.feed(piece)
                if payloads:
                    yield payloads
            payloads = frames.close()
            if payloads:
                yield payloads
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError) as exc:
            raise RuntimeGone(f"{type(exc).__name__}: {exc}") from exc
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def cancel(self, run_id: str) -> bool:
        """Ask the runtime to cancel a run; False when it does not know the run."""
        response = await self._client.post(f"/runs/{run_id}/cancel")
        return response.status_code == 200

    async def message(self, run_id: str, message_id: str, text: str) -> int:
        """Queue a steering message on a run (native/README.md); the runtime's status: 200
        queued, 404 no such run, 409 it starts no more rounds, 429 too many waiting."""
        body = {"id": message_id, "text": text}
        response = await self._client.post(f"/runs/{run_id}/messages", json=body)
        return response.status_code

    async def health(self) -> dict[str, Any]:
        response = await self._client.get("/healthz", timeout=5.0)
        response.raise_for_status()
        result: dict[str, Any] = response.json()
        return result

    async def aclose(self) -> None:
        await self._client.aclose()


def _status(head: bytes) -> int:
    """The status code of an HTTP/1.1 response head (0 when it is not one)."""
    parts = head.split(b" ", 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or not parts[1].isdigit():
        return 0
    return int(parts[1])
