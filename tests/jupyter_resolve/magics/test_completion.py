"""``%resolve --model <TAB>``: IPython's completer asks the live server's model list."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from IPython.core.completer import provisionalcompleter
from IPython.core.interactiveshell import InteractiveShell

from jupyter_resolve.magics import load_magics
from jupyter_resolve.magics.completion import wants_model
from tests.conftest import Server


def test_only_the_value_of_model_is_completed() -> None:
    assert wants_model("%resolve --model ", "")
    assert wants_model("%resolve --soul planner --model cl", "cl")
    assert not wants_model("%resolve --model", "--model")
    assert not wants_model("%resolve --soul ", "")
    assert not wants_model("%resolve what is --model", "--model")


def complete(shell: InteractiveShell, line: str) -> list[str]:
    with provisionalcompleter():
        return [c.text for c in shell.Completer.completions(line, len(line))]


async def test_completion_lists_the_servers_models(
    server: Server, gateway: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # set as in a kernel the server started (the server keeps its own process's environment)
    monkeypatch.setenv("JUPYTER_RESOLVE_URL", server.base + "/")
    monkeypatch.setenv("JUPYTER_RESOLVE_TOKEN", server.token)
    shell = InteractiveShell.instance()
    try:
        load_magics(shell)
        # the server runs in this loop and the client is synchronous: complete from a thread
        matches = await asyncio.to_thread(complete, shell, "%resolve --model s")
        assert "scripted" in matches
        gateway.config.allowed_models = ["model-a", "model-b"]
        matches = await asyncio.to_thread(complete, shell, "%resolve --model model")
        assert set(matches) >= {"model-a", "model-b"} and "scripted" not in matches
    finally:
        InteractiveShell.clear_instance()
