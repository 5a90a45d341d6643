"""Sessions remember (DESIGN 9.1), end to end: a real server and runtime, the fake OpenAI server
recording what the provider receives."""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

from jupyter_resolve.providers import OpenAIProvider
from tests.conftest import Server
from tests.fakes.openai_server import ANSWER, FakeOpenAI, text_reply, tool_call
from tests.jupyter_resolve.peer.peerclient import PEERS, rpc

SECOND = "Your favourite number is 7319."


@pytest.fixture
def resolve_config() -> dict[str, Any]:
    return {"peer_secrets": PEERS}


@pytest.fixture
def recording(gateway: Any, jp_asyncio_loop: Any) -> Iterator[list[FakeOpenAI]]:
    holder: list[FakeOpenAI] = []
    yield holder
    for fake in holder:
        jp_asyncio_loop.run_until_complete(fake.stop())


async def provider(gateway: Any, holder: list[FakeOpenAI], replies: list[Any]) -> FakeOpenAI:
    fake = FakeOpenAI(replies)
    await fake.start()
    holder.append(fake)
    gateway.provider = OpenAIProvider(
        fake.base_url, "sk-test", "fake-model", max_retries=0, timeout=10
    )
    return fake


def first_turn() -> list[Any]:
    """A tool call (python 6*7 → 42), the answer, then the second chat's answer."""
    return [*tool_call(), text_reply(SECOND)]


def carries_first_turn(messages: list[dict[str, Any]], prompt: str) -> None:
    """The request holds the first turn whole: prompt, the call, its result, the answer."""
    roles = [m["role"] for m in messages]
    assert roles[0] == "system"
    assert messages[1] == {"role": "user", "content": prompt}
    call = messages[2]
    assert call["role"] == "assistant" and call["tool_calls"][0]["id"] == "call_fake1"
    assert call["tool_calls"][0]["function"]["name"] == "python"
    assert messages[3] == {"role": "tool", "tool_call_id": "call_fake1", "content": "42"}
    assert messages[4] == {"role": "assistant", "content": ANSWER}
    assert messages[5] == {"role": "user", "content": "What is my favourite number?"}
    assert len(messages) == 6


async def test_the_second_chat_of_a_session_carries_the_first_turn(
    server: Server, gateway: Any, recording: list[FakeOpenAI]
) -> None:
    fake = await provider(gateway, recording, first_turn())
    first = await server.chat("My favourite number is 7319.", session_id="s-remember")
    assert first.of("run.completed")[0]["reason"] == "stop"
    second = await server.chat("What is my favourite number?", session_id="s-remember")
    assert second.text() == SECOND
    carries_first_turn(fake.requests[2].body["messages"], "My favourite number is 7319.")
    started = second.of("run.started")[0]
    digest = started["manifest"]["transcript_sha256"]
    assert digest and started["context"]["transcript_sha256"] == digest
    assert started["context"]["history_messages"] == 4
    # the transcript endpoint shows the same conversation
    got = await server.get("/resolve/api/sessions/s-remember/transcript")
    assert got.status_code == 200
    body = got.json()
    assert body["session_id"] == "s-remember" and body["tokens_estimate"] > 0
    assert [m["role"] for m in body["messages"]] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
        "assistant",
    ]
    assert body["messages"][-1] == {"role": "assistant", "content": SECOND}
    bad = await server.get("/resolve/api/sessions/..%2Fx/transcript")
    assert bad.status_code in (400, 404)
    empty = await server.get("/resolve/api/sessions/s-unknown/transcript")
    assert empty.json()["messages"] == []


async def test_a_stateless_chat_carries_only_what_it_sent(
    server: Server, gateway: Any, recording: list[FakeOpenAI]
) -> None:
    fake = await provider(gateway, recording, first_turn())
    await server.chat("My favourite number is 7319.", session_id="s-stateless")
    sent = [
        {"role": "user", "content": "earlier"},
        {"role": "assistant", "content": "noted"},
        {"role": "user", "content": "What is my favourite number?"},
    ]
    stream = await server.stream(
        "/resolve/api/chat", {"messages": sent, "session_id": "s-stateless"}
    )
    assert stream.of("run.started")[0]["manifest"]["transcript_sha256"] is None
    assert fake.requests[2].body["messages"][1:] == sent


async def test_the_facade_continues_a_named_session(
    server: Server, gateway: Any, recording: list[FakeOpenAI]
) -> None:
    fake = await provider(gateway, recording, first_turn())
    oa = openai.AsyncOpenAI(
        base_url=f"{server.base}/resolve/v1", api_key=server.token, max_retries=0
    )
    async with oa:
        await oa.chat.completions.create(
            model="resolve",
            messages=[{"role": "user", "content": "My favourite number is 7319."}],
            extra_body={"session_id": "s-facade"},
        )
        raw = await oa.chat.completions.with_raw_response.create(
            model="resolve",
            messages=[{"role": "user", "content": "What is my favourite number?"}],
            extra_headers={"X-Resolve-Session": "s-facade"},
        )
    assert raw.headers["x-resolve-session"] == "s-facade"
    assert raw.parse().choices[0].message.content == SECOND
    carries_first_turn(fake.requests[2].body["messages"], "My favourite number is 7319.")


async def test_an_a2a_context_id_continues_the_peers_session(
    server: Server, gateway: Any, recording: list[FakeOpenAI]
) -> None:
    fake = await provider(gateway, recording, [text_reply("Noted: 7319."), text_reply(SECOND)])

    async def send(text: str, context: str | None) -> dict[str, Any]:
        message: dict[str, Any] = {"messageId": f"m-{text[:4]}", "role": "ROLE_USER"}
        message["parts"] = [{"text": text}]
        if context:
            message["contextId"] = context
        sent = await rpc(server, "SendMessage", {"message": message})
        task: dict[str, Any] = sent["result"]["task"]
        deadline = time.monotonic() + 30
        while task["status"]["state"] == "TASK_STATE_WORKING" and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
            task = (await rpc(server, "GetTask", {"id": task["id"]}))["result"]
        return task

    first = await send("My favourite number is 7319.", None)
    second = await send("What is my favourite number?", first["contextId"])
    assert second["contextId"] == first["contextId"]
    assert second["artifacts"][0]["parts"][0]["text"] == SECOND
    messages = fake.requests[1].body["messages"]
    assert messages[1:] == [
        {"role": "user", "content": "My favourite number is 7319."},
        {"role": "assistant", "content": "Noted: 7319."},
        {"role": "user", "content": "What is my favourite number?"},
    ]
    # a peer cannot read a Jupyter user's session by naming it: its contextId names a
    # session in its own namespace (issue 31.3)
    await server.chat("private", session_id="s-mine")
    message = {"messageId": "m-x", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
    sent = await rpc(server, "SendMessage", {"message": {**message, "contextId": "s-mine"}})
    run = gateway.runs.get(sent["result"]["task"]["metadata"]["runId"])
    assert run.session_id == "peer-alpha-s-mine"


async def test_agents_md_reaches_the_system_prompt_and_the_manifest(
    server: Server, gateway: Any, recording: list[FakeOpenAI], jp_root_dir: Path
) -> None:
    fake = await provider(gateway, recording, [text_reply("ok")])
    text = "Always answer in French.\n"
    (jp_root_dir / "AGENTS.md").write_text(text)
    (jp_root_dir / ".resolve").mkdir(exist_ok=True)
    (jp_root_dir / ".resolve" / "instructions.md").write_text("x" * 20_000)
    stream = await server.chat("hello")
    system = fake.requests[0].body["messages"][0]["content"]
    assert "Project instructions (AGENTS.md):\nAlways answer in French." in system
    assert system.index("French") < system.index("Tool discipline")
    assert "[instructions cut: only the first 16384 bytes" in system
    used = stream.of("run.started")[0]["manifest"]["instructions"]
    assert used[0] == {
        "path": "AGENTS.md",
        "sha256": hashlib.sha256(text.encode()).hexdigest(),
        "cut": False,
    }
    assert used[1]["path"] == ".resolve/instructions.md" and used[1]["cut"] is True
