"""The gateway supervises agent-httpd: kill it mid-stream, cancel runs, keep secrets out of it."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jupyter_resolve.providers import OpenAIProvider
from tests.conftest import Server
from tests.fakes._server import Part
from tests.fakes.openai_server import DONE, FakeOpenAI, chunk, sse, stream


def slow_reply(pieces: int = 200, delay: float = 0.02) -> list[Any]:
    frames: list[bytes | Part] = [sse(chunk({"role": "assistant", "content": ""}))]
    frames += [Part(sse(chunk({"content": f"w{i} "})), delay=delay) for i in range(pieces)]
    frames += [sse(chunk({}, "stop")), DONE]
    return [stream(frames)]


@pytest.fixture
def slow_provider(gateway: Any, jp_asyncio_loop: Any) -> Iterator[FakeOpenAI]:
    fake = FakeOpenAI(slow_reply())
    jp_asyncio_loop.run_until_complete(fake.start())
    gateway.provider = OpenAIProvider(fake.base_url, None, "fake-model")
    yield fake
    jp_asyncio_loop.run_until_complete(fake.stop())


async def wait_for(predicate: Any, timeout: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        assert asyncio.get_running_loop().time() < deadline, "condition not met in time"
        await asyncio.sleep(0.05)


async def test_sigkill_mid_stream_ends_run_with_error_and_runtime_comes_back(
    server: Server, gateway: Any, slow_provider: FakeOpenAI
) -> None:
    await gateway.start()
    old_pid = gateway.supervisor.pid

    async def kill_after_first_token() -> None:
        await wait_for(
            lambda: any(
                e.type == "text.delta" for r in gateway.runs.runs.values() for e in r.events
            )
        )
        os.kill(old_pid, signal.SIGKILL)

    killer = asyncio.create_task(kill_after_first_token())
    result = await server.chat("long answer please")
    await killer
    errors = result.of("run.error")
    assert errors and errors[0]["code"] == "runtime_died"
    assert "restarted" in errors[0]["message"]
    assert result.types()[-1] == "run.completed"
    assert result.of("run.completed")[0]["reason"] == "error"
    await wait_for(
        lambda: (
            gateway.supervisor.state == "running" and gateway.supervisor.pid not in (None, old_pid)
        )
    )
    health = (await server.get("/resolve/api/health")).json()
    assert health["runtime"]["state"] == "running"
    assert health["runtime"]["pid"] != old_pid
    assert health["runtime"]["restarts"] >= 1
    slow_provider.scenario = slow_reply(pieces=3, delay=0)
    again = await server.chat("and now?")
    assert again.of("run.completed")[0]["reason"] == "stop"
    assert again.text() == "w0 w1 w2 "


async def test_cancel_ends_the_run_cancelled(
    server: Server, gateway: Any, slow_provider: FakeOpenAI
) -> None:
    async def cancel_when_streaming() -> None:
        await wait_for(
            lambda: any(
                e.type == "text.delta" for r in gateway.runs.runs.values() for e in r.events
            )
        )
        run_id = next(iter(gateway.runs.runs))
        response = await server.post(f"/resolve/api/runs/{run_id}/cancel", {})
        assert response.status_code == 200

    canceller = asyncio.create_task(cancel_when_streaming())
    result = await server.chat("long answer please")
    await canceller
    done = result.of("run.completed")[0]
    assert done["reason"] == "cancelled"
    assert len(result.text().split()) < 200


async def test_cancel_stops_reading_the_provider(server: Server, gateway: Any) -> None:
    """The gateway flushes the provider's chunks to the runtime in bursts; a cancel must still
    close the provider's stream (a 40-second reply is left after its first words)."""
    fake = FakeOpenAI(slow_reply(pieces=2000))
    await fake.start()
    try:
        gateway.provider = OpenAIProvider(fake.base_url, None, "fake-model")
        stream = await server.chat("long answer please", until=lambda e: e.event == "text.delta")
        run_id = stream.events[0].data["run_id"]
        assert fake._tasks, "the provider is streaming"
        response = await server.post(f"/resolve/api/runs/{run_id}/cancel", {})
        assert response.status_code == 200
        await wait_for(lambda: gateway.runs.get(run_id).reason == "cancelled")
        # the provider's connection is closed long before its reply would have ended
        await wait_for(lambda: not fake._tasks, timeout=20.0)
    finally:
        await fake.stop()


async def test_provider_key_never_reaches_the_runtime(
    server: Server, gateway: Any, jp_root_dir: Path
) -> None:
    canary = "sk-canary-do-not-leak-7f3a"
    fake = FakeOpenAI("text")
    await fake.start()
    try:
        gateway.provider = OpenAIProvider(fake.base_url, canary, "fake-model")
        result = await server.chat("hi")
        assert result.text()
        assert fake.requests[0].headers["authorization"] == f"Bearer {canary}"
    finally:
        await fake.stop()
    pid = gateway.supervisor.pid
    environ = Path(f"/proc/{pid}/environ").read_bytes()
    assert canary.encode() not in environ
    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    assert gateway.runtime_token.encode() not in cmdline
    for log in (jp_root_dir / ".resolve" / "runs").iterdir():
        assert canary not in log.read_text()
    # The launch token is not in the server's own environment, where kernels would inherit it.
    assert gateway.runtime_token not in "".join(os.environ.values())
