"""The official A2A SDKs, 0.3 and 1.x (each in its own venv, `make setup`), against a real
server: they read the card and send, get, cancel, stream, list and resubscribe, with a Jupyter
token (a second client with the same token finds the first's task) and with the signature."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from jupyter_resolve.providers import ScriptedProvider
from tests.conftest import Server
from tests.jupyter_resolve.clients.venvs import run_client
from tests.jupyter_resolve.peer.peerclient import PEERS, SECRET

ANSWER = "The answer comes in several small pieces of streamed text."
SCRIPTS = {"a2a-03": "a2a_v03_client.py", "a2a-1": "a2a_v1_client.py"}
DONE = {"a2a-03": "completed", "a2a-1": "TASK_STATE_COMPLETED"}
CANCELED = {"a2a-03": "canceled", "a2a-1": "TASK_STATE_CANCELED"}
WORKING = {"a2a-03": "working", "a2a-1": "TASK_STATE_WORKING"}


@pytest.fixture
def resolve_config() -> dict[str, Any]:
    return {"peer_secrets": PEERS, "peer_tools": {"alpha": ["web_fetch"]}}


@contextlib.asynccontextmanager
async def person(server: Server, gateway: Any, tmp_path: Path) -> AsyncIterator[None]:
    """Every run asks a person before a web_fetch, then answers. This person denies at once,
    except for the tasks whose prompt starts with "hold" (they wait: the client cancels them)."""
    script = tmp_path / "script.jsonl"
    turns = [
        {"content": "", "tool_calls": [{"name": "web_fetch", "arguments": {"url": "http://x/"}}]},
        {"content": ANSWER},
    ]
    script.write_text("\n".join(json.dumps(t) for t in turns) + "\n")
    gateway.provider = ScriptedProvider(script)
    decided: set[str] = set()

    async def decide() -> None:
        while True:
            for run in list(gateway.runs.runs.values()):
                if (run.prompt_title() or "").startswith("hold"):
                    continue
                for call_id in list(run.approvals):
                    if call_id in decided:
                        continue
                    decided.add(call_id)
                    path = f"/resolve/api/runs/{run.run_id}/approvals/{call_id}"
                    await server.post(path, {"decision": "deny"})
            await asyncio.sleep(0.05)

    task = asyncio.create_task(decide())
    yield
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


def check_full(sdk: str, report: dict[str, Any]) -> None:
    card = report["card"]
    assert card["streaming"] is True
    assert card["schemes"] == ["jupyterToken", "resolveSignature"]
    assert report["send"]["state"] == DONE[sdk] and report["send"]["answer"] == ANSWER
    assert report["get"] == {"state": DONE[sdk], "answer": ANSWER}
    assert report["cancel"] == {"before": WORKING[sdk], "after": CANCELED[sdk]}
    stream = report["stream"]
    assert stream["answer"] == ANSWER and stream["final"] == DONE[sdk]
    # the answer came in pieces (as many as the run's pace made): the first replaces, the rest
    # append, only the last is last
    pieces = len(stream["append"])
    assert pieces >= 1
    assert stream["append"] == [False] + [True] * (pieces - 1)
    assert stream["last_chunk"] == [False] * (pieces - 1) + [True]
    subscribed = report["subscribe"]
    assert subscribed["final"] == CANCELED[sdk]


@pytest.mark.parametrize("sdk", ["a2a-03", "a2a-1"])
async def test_sdk_with_a_jupyter_token(
    server: Server, gateway: Any, tmp_path: Path, sdk: str
) -> None:
    url, auth = server.base + "/resolve", json.dumps({"token": server.token})
    async with person(server, gateway, tmp_path):
        report = await run_client(sdk, SCRIPTS[sdk], url, auth, "full")
    check_full(sdk, report)
    if sdk == "a2a-03":
        assert report["card"]["url"] == server.base + "/resolve/peer/a2a"
        assert report["card"]["types"] == ["apiKey", "http"]
        assert report["stream"]["kinds"][0] == "task"
        assert report["stream"]["kinds"][-1] == "status-update"
    else:
        assert report["card"]["interfaces"] == ["1.0", "0.3"]
        assert report["stream"]["kinds"][0] == "task"
        assert report["stream"]["kinds"][-1] == "status_update"
        assert report["send"]["id"] in report["list"]
    # another client, another connection, the same token: the same owner
    again = await run_client(sdk, SCRIPTS[sdk], url, auth, f"get:{report['send']['id']}")
    assert again["get"] == {"state": DONE[sdk], "answer": ANSWER}
    # the owner is the token's digest, never the token
    owner = gateway.runs.get(report["send"]["id"]).peer
    assert owner.startswith("jupyter:token:") and server.token not in owner


@pytest.mark.parametrize("sdk", ["a2a-03", "a2a-1"])
async def test_sdk_with_the_signature(
    server: Server, gateway: Any, tmp_path: Path, sdk: str
) -> None:
    url = server.base + "/resolve"
    auth = json.dumps({"peer": "alpha", "secret": SECRET})
    async with person(server, gateway, tmp_path):
        report = await run_client(sdk, SCRIPTS[sdk], url, auth, "full")
    check_full(sdk, report)
    again = await run_client(sdk, SCRIPTS[sdk], url, auth, f"get:{report['send']['id']}")
    assert again["get"]["state"] == DONE[sdk]
    # a token caller is another owner: it does not see the peer's task
    token = json.dumps({"token": server.token})
    with pytest.raises(AssertionError, match=r"no job"):
        await run_client(sdk, SCRIPTS[sdk], url, token, f"get:{report['send']['id']}")
