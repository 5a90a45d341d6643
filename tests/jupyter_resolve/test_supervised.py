"""The one supervised life cycle (supervised.py): a peer whose ``_open`` the test scripts, and
a real process spawned through it (the runtime, the local model server, the ACP and MCP tests
run the real children)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import time
from pathlib import Path

import pytest

from jupyter_resolve.supervised import SessionUnavailable, Supervised

SECRET = "hunter2-secret"


class Scripted(Supervised[str]):
    SLOW_START = "did not say hello within"

    def __init__(self, tmp_path: Path, opening: str = "ok") -> None:
        super().__init__(
            "fake",
            stderr_path=tmp_path / "fake.stderr.log",
            start_timeout=0.2,
            log=logging.getLogger("test"),
        )
        self.opening = opening
        self.closed = 0

    def withhold(self, text: str) -> str:
        return text.replace(SECRET, "[withheld]")

    def _check(self) -> None:
        pass

    async def _open(self, stack: contextlib.AsyncExitStack) -> str:
        stderr = self.open_stderr(stack)
        stderr.write(f"starting with {SECRET}\n")
        stderr.flush()
        if self.opening == "hang":
            await asyncio.sleep(60)
        if self.opening == "raise":
            raise ValueError(f"bad key {SECRET}")
        return f"session {self.starts}"

    def _closed(self) -> None:
        self.closed += 1


async def test_a_peer_starts_once_and_stops(tmp_path: Path) -> None:
    peer = Scripted(tmp_path)
    assert await peer.ensure() == await peer.ensure() == "session 1"
    assert (peer.state, peer.starts) == ("ready", 1)
    assert peer.stderr_tail() == "starting with [withheld]"
    await peer.stop()
    assert (peer.state, peer.closed) == ("stopped", 1)
    assert await peer.ensure() == "session 2"
    await peer.stop()


async def test_a_slow_start_fails_in_the_subclass_words_and_is_not_waited_for(
    tmp_path: Path,
) -> None:
    peer = Scripted(tmp_path, "hang")
    began = time.monotonic()
    with pytest.raises(SessionUnavailable, match=r"did not say hello within 0\.2 s"):
        await peer.ensure()
    assert time.monotonic() - began < 5  # cancelled at once, not after the stop grace
    assert (peer.state, peer.closed) == ("failed", 1)
    await peer.stop()
    assert peer.state == "failed"


async def test_a_failed_start_is_recorded_with_its_secrets_withheld(tmp_path: Path) -> None:
    peer = Scripted(tmp_path, "raise")
    with pytest.raises(SessionUnavailable) as caught:
        await peer.ensure()
    assert str(caught.value) == "could not start: ValueError: bad key [withheld]"
    assert peer.error == str(caught.value) and peer.state == "failed"


class Sleeper(Supervised[int]):
    """A real process that writes a secret to stderr and then sleeps; healthy while
    ``self.healthy``; started again at once when it ends (as agent-httpd is)."""

    KEEP_RUNNING = True

    def __init__(self) -> None:
        super().__init__("sleeper", start_timeout=10, log=logging.getLogger("test"))
        self.health_interval = 0.05
        self.healthy = True

    def withhold(self, text: str) -> str:
        return text.replace(SECRET, "[withheld]")

    async def _open(self, stack: contextlib.AsyncExitStack) -> int:
        code = (
            f"import sys, time; print('key {SECRET}', file=sys.stderr, flush=True); time.sleep(60)"
        )
        env = {"PATH": os.environ.get("PATH", "")}
        proc = await self.spawn(stack, [sys.executable, "-c", code], env=env, grace=1.0)
        return proc.pid

    async def _healthy(self) -> bool:
        return self.healthy


async def wait_until(predicate: object, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        assert time.monotonic() < deadline, "not in time"
        await asyncio.sleep(0.05)


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


async def test_a_process_that_dies_or_hangs_is_started_again_and_stopped_for_good() -> None:
    child = Sleeper()
    first = await child.ensure()
    await wait_until(lambda: "[withheld]" in child.stderr_tail())
    assert SECRET not in child.stderr_tail() and child.stderr_tail() == "key [withheld]"
    os.kill(first, 9)  # it dies: started again at once, not on next need
    await wait_until(lambda: child.running and child.starts == 2)
    second = await child.ensure()
    assert second != first
    child.healthy = False  # it hangs: three failed checks, then a new one
    await wait_until(lambda: child.starts == 3 and child.running)
    assert gone(second)
    child.healthy = True
    third = await child.ensure()
    await child.stop()
    assert gone(third) and not child.running and child.state == "stopped"
    await asyncio.sleep(0.3)
    assert child.starts == 3  # a stop is not an end to recover from
