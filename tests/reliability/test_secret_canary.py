"""A provider key set in the server's environment reaches the provider call and nothing else:
not the runtime's environment or argv, not a frame, event or run log, not the scratch kernel,
not any file under .resolve (issue 10)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Server
from tests.fakes.openai_server import FakeOpenAI, text, tool_call

CANARY = "sk-canary-3f9d2c7e1b"


@pytest.fixture
def fake(jp_asyncio_loop: Any) -> Iterator[FakeOpenAI]:
    server = FakeOpenAI([*tool_call(), *text()])
    jp_asyncio_loop.run_until_complete(server.start())
    yield server
    jp_asyncio_loop.run_until_complete(server.stop())


@pytest.fixture
def resolve_config(fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    monkeypatch.setenv("CANARY_PROVIDER_KEY", CANARY)
    return {
        "provider": "openai",
        "base_url": fake.base_url,
        "model": "fake-model",
        "api_key_env": "CANARY_PROVIDER_KEY",
    }


async def test_the_key_goes_to_the_provider_and_nowhere_else(
    server: Server, gateway: Any, fake: FakeOpenAI, jp_root_dir: Path
) -> None:
    # The fake's tool call runs `print(6*7)`; then ask the kernel for its environment too.
    stream = await server.chat("compute", session_id="s-canary")
    assert stream.of("tool.completed")[0]["output"] == "42"
    kernel = gateway.kernels.kernels["s-canary"]
    env_dump = await kernel.execute("import os; print(dict(os.environ))", timeout=30)
    assert "HOME" in env_dump.stdout and CANARY not in env_dump.stdout

    # The provider call carries it, as the Authorization header only.
    assert all(r.headers["authorization"] == f"Bearer {CANARY}" for r in fake.requests)
    assert all(CANARY not in json.dumps(r.body) for r in fake.requests)
    # Nowhere in what clients saw, nor in the runtime, nor on disk.
    assert CANARY not in json.dumps([e.data for e in stream.events])
    pid = gateway.supervisor.pid
    for name in ("environ", "cmdline"):
        assert CANARY.encode() not in Path(f"/proc/{pid}/{name}").read_bytes()
    for path in (jp_root_dir / ".resolve").rglob("*"):
        if path.is_file():
            assert CANARY.encode() not in path.read_bytes(), path
    health = (await server.get("/resolve/api/health")).text
    assert CANARY not in health and "CANARY_PROVIDER_KEY" in health  # the name, not the value


async def test_the_key_is_taken_out_of_the_servers_environment(server: Server) -> None:
    import os

    # Kernels and terminals the server starts inherit its environment: the key is not there.
    assert "CANARY_PROVIDER_KEY" not in os.environ
    assert (await server.get("/resolve/api/health")).json()["provider"]["api_key_set"] is True
