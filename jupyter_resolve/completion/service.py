"""Inline completion's state in this server (DESIGN 10.3): the requests in flight per (person,
cell), so a newer one cancels the older, and per person, so nobody has more than
``c.Resolve.completion_max_concurrent`` at the provider at once (300 parallel requests of one
person went upstream before); and each person's usage since the server started. All bounded."""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from ..contracts.errors import TooManyRequests
from ..contracts.prices import price_for

MAX_IN_FLIGHT = 1024
MAX_USERS = 1024


@dataclass
class Usage:
    """One user's completion usage since the server started (not runs: no run log)."""

    requests: int = 0
    cancelled: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0

    def add(self, model: str, counts: dict[str, int], prices: dict[str, Any]) -> None:
        self.requests += 1
        prompt = counts.get("prompt_tokens", 0)
        written = counts.get("completion_tokens", 0)
        self.prompt_tokens += prompt
        self.completion_tokens += written
        price = price_for(model, prices)
        if price is not None:
            self.cost += (prompt * price.input + written * price.output) / 1_000_000


@dataclass
class CompletionState:
    """The requests in flight per (user, cell) and the usage per user, both bounded."""

    in_flight: OrderedDict[tuple[str, str], asyncio.Task[Any]] = field(default_factory=OrderedDict)
    by_user: dict[str, set[asyncio.Task[Any]]] = field(default_factory=dict)  # no empty sets
    usage: OrderedDict[str, Usage] = field(default_factory=OrderedDict)
    prices: dict[str, Any] | None = None

    def admit(self, user: str, key: tuple[str, str] | None, cap: int) -> None:
        """Make room for a request of ``user`` (for the cell ``key``): the older request for
        the same cell is cancelled (the newer wins); :class:`TooManyRequests` when ``user``
        still has ``cap`` in flight."""
        older = self.in_flight.pop(key, None) if key is not None else None
        if older is not None and not older.done():
            older.cancel()
            self._forget(user, older)  # its place is free now, though it ends a moment later
        if len(self.by_user.get(user, ())) >= cap:
            raise TooManyRequests(
                f"{cap} completion requests of yours are already in flight "
                "(c.Resolve.completion_max_concurrent): wait for one to end",
                retry_after=1,
                code="too_many_completions",
            )

    def start(self, user: str, key: tuple[str, str] | None, task: asyncio.Task[Any]) -> None:
        """Count ``task`` (admitted) as ``user``'s, and the cell's latest."""
        self.by_user.setdefault(user, set()).add(task)
        if key is None:
            return
        self.in_flight[key] = task
        while len(self.in_flight) > MAX_IN_FLIGHT:
            self.in_flight.popitem(last=False)

    def end(self, user: str, key: tuple[str, str] | None, task: asyncio.Task[Any]) -> None:
        self._forget(user, task)
        if key is not None and self.in_flight.get(key) is task:
            del self.in_flight[key]

    def _forget(self, user: str, task: asyncio.Task[Any]) -> None:
        tasks = self.by_user.get(user)
        if tasks is not None:
            tasks.discard(task)
            if not tasks:
                del self.by_user[user]

    def of(self, user: str) -> Usage:
        usage = self.usage.pop(user, None) or Usage()
        self.usage[user] = usage  # the most recent last; the oldest user is dropped first
        while len(self.usage) > MAX_USERS:
            self.usage.popitem(last=False)
        return usage
