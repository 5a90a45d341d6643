"""Client of agent-httpd: ``POST /chat`` streamed as frame payloads, cancel, health."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx

from ..contracts.bodies import AgentChatBody
from ..contracts.errors import RuntimeGone, RuntimeRejected
from ..contracts.sse import SSEDecoder


class RuntimeClient:
    """Talks to one running agent-httpd at ``base_url`` with its launch token."""

    def __init__(self, base_url: str, token: str) -> None:
        self.base_url = base_url
        self._client = httpx.AsyncClient(
            base_url=base_url,
            headers={"Authorization": f"Bearer {token}"},
            timeout=httpx.Timeout(10.0, read=None),
            limits=httpx.Limits(max_connections=1000, max_keepalive_connections=20),
            trust_env=False,
        )

    async def chat(self, body: AgentChatBody) -> AsyncIterator[str]:
        """Yield the data of every frame of the run's stream."""
        try:
            async with self._client.stream(
                "POST", "/chat", content=body.model_dump_json().encode()
            ) as response:
                if response.status_code != 200:
                    text = (await response.aread()).decode(errors="replace")
                    raise RuntimeRejected(response.status_code, text[:500])
                decoder = SSEDecoder()
                async for piece in response.aiter_bytes():
                    for event in decoder.feed(piece):
                        yield event.data
                for event in decoder.close():
                    yield event.data
        except httpx.TransportError as exc:
            raise RuntimeGone(f"{type(exc).__name__}: {exc}") from exc

    async def cancel(self, run_id: str) -> bool:
        """Ask the runtime to cancel a run; False when it does not know the run."""
        response = await self._client.post(f"/runs/{run_id}/cancel")
        return response.status_code == 200

    async def health(self) -> dict[str, Any]:
        response = await self._client.get("/healthz", timeout=5.0)
        response.raise_for_status()
        result: dict[str, Any] = response.json()
        return result

    async def aclose(self) -> None:
        await self._client.aclose()
