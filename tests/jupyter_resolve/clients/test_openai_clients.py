"""litellm and langchain-openai (their own venv, `make setup`) stream through the facade of a
real server, with a soul's model."""

from __future__ import annotations

from tests.conftest import Server
from tests.jupyter_resolve.clients.venvs import run_client


async def test_litellm_and_langchain_stream(server: Server) -> None:
    base = server.base + "/resolve/v1"
    report = await run_client("litellm", "oai_clients.py", base, server.token, "resolve/planner")
    for client in ("litellm", "langchain"):
        assert "scripted" in report[client]["text"], report
        assert report[client]["chunks"] > 1, report  # it came as a stream
