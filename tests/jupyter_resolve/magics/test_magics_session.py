"""%resolve remembers (issue 16): two cells of a notebook run headless with nbclient against a
real server, whose provider is the fake OpenAI server recording what it receives."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest

from tests.fakes.openai_server import FakeOpenAI
from tests.jupyter_resolve.magics.server import RunningServer, running_server
from tests.jupyter_resolve.test_sessions import SECOND, carries_first_turn, first_turn

FIRST = "My favourite number is 7319."


class FakeInThread:
    """The fake provider on an event loop of its own (the server is another process)."""

    def __init__(self, replies: list[Any], **options: Any) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.fake = FakeOpenAI(replies, **options)

    def __enter__(self) -> FakeOpenAI:
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self.fake.start(), self.loop).result(10)
        return self.fake

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self.fake.stop(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


@pytest.fixture
def recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[RunningServer, FakeOpenAI]]:
    monkeypatch.setenv("RESOLVE_TEST_PROVIDER_KEY", "sk-test")
    with FakeInThread(first_turn()) as fake:
        args = (
            "--Resolve.provider=openai",
            f"--Resolve.base_url={fake.base_url}",
            "--Resolve.model=fake-model",
            "--Resolve.api_key_env=RESOLVE_TEST_PROVIDER_KEY",
            "--Resolve.provider_max_retries=0",
        )
        with running_server(tmp_path, *args) as server:
            yield server, fake


@pytest.mark.timeout(300)
def test_the_second_resolve_cell_carries_the_first_turn(
    recorded: tuple[RunningServer, FakeOpenAI],
) -> None:
    server, fake = recorded
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell("%load_ext jupyter_resolve"),
        nbformat.v4.new_code_cell(f"%resolve {FIRST}"),
        nbformat.v4.new_code_cell("%resolve What is my favourite number?"),
    ]
    server.execute(notebook)
    assert len(fake.requests) == 3, [c.outputs for c in notebook.cells]
    carries_first_turn(fake.requests[2].body["messages"], FIRST)
    shown = "".join(
        str(o.get("data", {}).get("text/plain", "")) + str(o.get("text", ""))
        for o in notebook.cells[2].outputs
    )
    assert SECOND in shown
