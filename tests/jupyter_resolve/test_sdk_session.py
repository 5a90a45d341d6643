"""The supervised session's life cycle, without a process: a peer whose ``_open`` the test
scripts (the ACP and MCP tests run the real SDKs)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from pathlib import Path

import pytest

from jupyter_resolve.sdk_session import SessionUnavailable, SupervisedSession

SECRET = "hunter2-secret"


class Scripted(SupervisedSession[str]):
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

    def _import_sdk(self) -> None:
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
