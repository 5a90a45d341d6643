"""The gateway supervises agent-httpd: kill it mid-stream, cancel runs, keep secrets out of it."""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import signal
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jupyter_resolve.providers import OpenAIProvider
from tests.conftest import Server
from tests.fakes._server import Part
from tests.fakes.openai_server import DONE, FakeOpenAI, chunk, sse, stream
from tests.native.procfs import look_for


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
    with contextlib.suppress(PermissionError):  # the runtime is not dumpable: root-only
        assert canary.encode() not in Path(f"/proc/{pid}/environ").read_bytes()
    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    assert gateway.runtime_token.encode() not in cmdline
    for log in (jp_root_dir / ".resolve" / "runs").iterdir():
        assert canary not in log.read_text()
    # The launch token is not in the server's own environment, where kernels would inherit it.
    assert gateway.runtime_token not in "".join(os.environ.values())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc is Linux")
async def test_the_runtime_token_is_not_readable_under_proc(server: Server, gateway: Any) -> None:
    """Issue 14 item 4: the supervisor hands the token over an inherited pipe, not the
    environment (``/proc/<pid>/environ`` keeps whatever was unset), and the runtime is not
    dumpable (its memory is root-only): a same-user process finds the token nowhere."""
    assert (await server.chat("hi")).of("run.completed")[0]["reason"] == "stop"
    pid = gateway.supervisor.pid
    report = await asyncio.to_thread(look_for, pid, gateway.runtime_token)
    assert report["found"] == []
    assert "status" in report["opened"]  # the reader did look
    assert report["mem"] is False
    assert (await server.chat("again")).of("run.completed")[0]["reason"] == "stop"
    assert gateway.supervisor.pid == pid


IDLE = 1100  # more than the old cap of max_runs + 64 connections


def idle_connections(port: int, n: int) -> list[socket.socket]:
    """n connections to the runtime that each sent one byte and then nothing (no token)."""
    socks: list[socket.socket] = []
    try:
        for _ in range(n):
            sock = socket.create_connection(("127.0.0.1", port), timeout=10)
            socks.append(sock)
            sock.sendall(b"G")
    except BaseException:
        for sock in socks:
            sock.close()
        raise
    return socks


async def test_idle_connections_starve_neither_health_nor_a_live_run(
    server: Server, gateway: Any, slow_provider: FakeOpenAI
) -> None:
    """Issue 14 item 10: a local process without the token holds 1,100 one-byte connections to
    agent-httpd; its health check still answers, so the supervisor keeps it, and the run that
    was streaming ends normally."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < IDLE + 500:
        if hard != resource.RLIM_INFINITY and hard < IDLE + 500:
            pytest.skip(f"needs {IDLE + 500} open files, the hard limit is {hard}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (IDLE + 500, hard))
    await gateway.start()
    supervisor = gateway.supervisor
    pid, restarts = supervisor.pid, supervisor.restarts
    port = int(supervisor.client.base_url.rsplit(":", 1)[1])
    chat = asyncio.create_task(server.chat("long answer please"))
    await wait_for(
        lambda: any(e.type == "text.delta" for r in gateway.runs.runs.values() for e in r.events)
    )
    socks = await asyncio.to_thread(idle_connections, port, IDLE)
    try:
        health = await supervisor.client.health()  # the supervisor's own check (5 s timeout)
        assert health["ok"] is True and health["active_runs"] == 1
        result = await chat
    finally:
        for sock in socks:
            sock.close()
    assert result.of("run.completed")[0]["reason"] == "stop"
    assert len(result.text().split()) == 200
    # the supervisor checked every 0.5 s meanwhile and never gave up on the runtime
    assert supervisor.state == "running"
    assert (supervisor.pid, supervisor.restarts) == (pid, restarts)
