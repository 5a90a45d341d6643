"""A2A's ``message/send`` naming a working task steers it (issue 50.2): the text reaches the
task's model at its next step as a user turn, the task's history shows it, and a task that ended
takes none (UnsupportedOperation). A real server and runtime; the fake OpenAI server records
what the provider receives."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.conftest import Server
from tests.fakes.openai_server import text_reply
from tests.jupyter_resolve.peer.peerclient import PEERS, rpc
from tests.jupyter_resolve.test_sessions import provider, recording
from tests.jupyter_resolve.test_steering import slow_text

__all__ = ["recording"]  # the fixture, used by name

STEER = "only the table, please"


@pytest.fixture
def resolve_config() -> dict[str, Any]:
    return {"peer_secrets": PEERS}


def send(text: str, **message: Any) -> dict[str, Any]:
    parts = [{"kind": "text", "text": text}]
    return {
        "message": {"messageId": f"m-{text}", "role": "user", "parts": parts, **message},
        "configuration": {"blocking": False},
    }


async def working(gateway: Any, run_id: str) -> None:
    """Wait until the run's model has begun answering (its first text came)."""
    run = gateway.runs.get(run_id)
    for _ in range(600):
        if any(e.type == "text.delta" for e in run.events):
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the task did not start answering")


async def test_a_message_to_a_working_task_steers_it(
    server: Server, gateway: Any, recording: list[Any]
) -> None:
    replies = [slow_text("Plotting", " done."), text_reply("A table.")]
    fake = await provider(gateway, recording, replies)
    task = (await rpc(server, "message/send", send("plot the penguins")))["result"]
    assert task["status"]["state"] == "working"
    await working(gateway, task["id"])

    steered = await rpc(
        server,
        "message/send",
        {**send(STEER, taskId=task["id"], contextId=task["contextId"]), "configuration": {}},
    )
    answer = steered["result"]  # blocking: the task as it ended
    assert answer["id"] == task["id"] and answer["status"]["state"] == "completed"
    assert fake.requests[1].body["messages"][-1] == {"role": "user", "content": STEER}
    assert [m["parts"][0]["text"] for m in answer["history"]] == ["plot the penguins", STEER]

    ended = await rpc(server, "message/send", send("more", taskId=task["id"]))
    assert ended["error"]["code"] == -32004 and "already ended" in ended["error"]["message"]
    other = await rpc(server, "message/send", send("x", taskId=task["id"]), peer="beta")
    assert other["error"]["code"] == -32001  # another peer's task is not there for beta
