"""An external agent that starts and never answers ``initialize`` (the startup timeout)."""

from __future__ import annotations

import asyncio
from typing import Any

import acp
from acp import schema


class SilentAgent:
    async def initialize(self, protocol_version: int, **_: Any) -> schema.InitializeResponse:
        await asyncio.Event().wait()  # never
        raise AssertionError("unreachable")


if __name__ == "__main__":
    asyncio.run(acp.run_agent(SilentAgent()))
