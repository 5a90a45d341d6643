"""One caller at a time per agent process (jupyter_resolve/acp/gate.py, issue 44.3): a caller's
turns run together, another caller's wait until they ended, in order, and a waiting turn that is
cancelled gives its place up."""

from __future__ import annotations

import asyncio

import pytest

from jupyter_resolve.acp.gate import CallerGate


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


class Turns:
    """Turns that hold the gate until released, recording who is inside."""

    def __init__(self, gate: CallerGate) -> None:
        self.gate = gate
        self.inside: list[str] = []
        self.release: dict[str, asyncio.Event] = {}

    def start(self, name: str, caller: str) -> asyncio.Task[None]:
        self.release[name] = asyncio.Event()

        async def turn() -> None:
            async with self.gate.turn(caller):
                self.inside.append(name)
                try:
                    await self.release[name].wait()
                finally:
                    self.inside.remove(name)

        return asyncio.create_task(turn())


async def test_one_callers_turns_run_together_and_anothers_wait() -> None:
    turns = Turns(CallerGate())
    a1, a2 = turns.start("a1", "alice"), turns.start("a2", "alice")
    await settle()
    assert turns.inside == ["a1", "a2"]
    c1 = turns.start("c1", "carol")
    await settle()
    a3 = turns.start("a3", "alice")  # after carol: waits for her, not let in ahead
    await settle()
    assert turns.inside == ["a1", "a2"]
    turns.release["a1"].set()
    await settle()
    assert turns.inside == ["a2"]
    turns.release["a2"].set()
    await settle()
    assert turns.inside == ["c1"]
    turns.release["c1"].set()
    await settle()
    assert turns.inside == ["a3"]
    turns.release["a3"].set()
    await asyncio.gather(a1, a2, c1, a3)
    assert turns.gate.holder is None and turns.gate.inside == 0


async def test_a_cancelled_wait_gives_its_place_up() -> None:
    turns = Turns(CallerGate())
    a1 = turns.start("a1", "alice")
    await settle()
    c1, b1 = turns.start("c1", "carol"), turns.start("b1", "bob")
    await settle()
    c1.cancel()
    with pytest.raises(asyncio.CancelledError):
        await c1
    turns.release["a1"].set()
    await settle()
    assert turns.inside == ["b1"]
    turns.release["b1"].set()
    await asyncio.gather(a1, b1)
    assert not turns.gate.waiting and turns.gate.inside == 0
