"""The provider's model list, cached for ``c.Resolve.models_ttl`` seconds.

One answer is kept per provider object (a reconfigured gateway asks its new provider); a
failure is not cached, so the next request asks again.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from .base import Provider


class ModelList:
    def __init__(self, ttl: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl = ttl
        self.clock = clock
        self._cached: tuple[int, float, list[dict[str, Any]]] | None = None
        self._lock = asyncio.Lock()

    async def models(self, provider: Provider) -> tuple[list[dict[str, Any]], bool]:
        """The provider's models and whether they came from the cache; raises ProviderError."""
        async with self._lock:  # concurrent pickers share one request to the provider
            cached = self._cached
            if (
                cached is not None
                and cached[0] == id(provider)
                and self.clock() - cached[1] < self.ttl
            ):
                return cached[2], True
            listing = await provider.list_models()
            self._cached = (id(provider), self.clock(), listing)
            return listing, False
