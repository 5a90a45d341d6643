"""Thinking, caching, cost and model lists through the whole chain: a real Jupyter server, a
real agent-httpd and kernel, the Anthropic provider and the fake Messages API that refuses what
the real one refuses (a thinking block missing before tool_use is a 400)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from jupyter_resolve.providers import AnthropicProvider
from jupyter_resolve.providers.prices import load_prices
from tests.conftest import Server
from tests.fakes import anthropic_server as fake_anthropic
from tests.fakes.anthropic_server import FakeAnthropic

LOOP_BLOCK = {
    "type": "thinking",
    "thinking": fake_anthropic.LOOP_THINKING,
    "signature": fake_anthropic.LOOP_SIGNATURE,
}
PRICE = {"input": 3.0, "output": 15.0, "cache_read": 0.3, "cache_write": 3.75}


class Fakes:
    """Starts a fake with a scenario and points the gateway's provider at it."""

    def __init__(self, gateway: Any) -> None:
        self.gateway = gateway
        self.servers: list[FakeAnthropic] = []

    async def __call__(self, scenario: str, **provider: Any) -> FakeAnthropic:
        fake = FakeAnthropic(scenario)
        await fake.start()
        self.servers.append(fake)
        self.gateway.provider = AnthropicProvider(
            fake.base_url, "sk-ant-canary", "claude-fake", timeout=10, **provider
        )
        return fake


@pytest.fixture
def anthropic(gateway: Any, jp_asyncio_loop: Any) -> Iterator[Fakes]:
    holder = Fakes(gateway)
    yield holder
    for fake in holder.servers:
        jp_asyncio_loop.run_until_complete(fake.stop())


def assistant_turns(body: dict[str, Any]) -> list[list[dict[str, Any]]]:
    return [m["content"] for m in body["messages"] if m["role"] == "assistant"]


async def test_thinking_blocks_go_back_in_the_loop_and_in_the_next_run(
    server: Server, anthropic: Fakes
) -> None:
    fake = await anthropic("thinking_tools", thinking=2048)
    first = await server.chat("compute 6*7 with python", session_id="session-think")
    assert first.of("run.completed")[0]["reason"] == "stop", first.types()
    assert fake.refusals == []
    assert "".join(d["text"] for d in first.of("reasoning.delta")) == LOOP_BLOCK["thinking"]
    (requested,) = first.of("tool.requested")
    assert requested["thinking_blocks"] == [LOOP_BLOCK]  # logged, so a transcript has it
    assert first.text() == fake_anthropic.ANSWER
    # round 2: the turn that carried tool_use opens with its block, unchanged
    round2 = fake.requests[1].body
    assert round2["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    (turn,) = assistant_turns(round2)
    assert turn[0] == LOOP_BLOCK and turn[-1]["type"] == "tool_use"
    # the next run of the session replays the first from its log, block included
    second = await server.chat("and once more", session_id="session-think")
    assert second.of("run.completed")[0]["reason"] == "stop"
    assert fake.refusals == []
    replayed = assistant_turns(fake.requests[2].body)
    assert replayed[0][0] == LOOP_BLOCK
    transcript = await server.get("/resolve/api/sessions/session-think/transcript")
    assert transcript.status_code == 200
    turns = [m for m in transcript.json()["messages"] if m.get("tool_calls")]
    assert turns[0]["thinking_blocks"] == [LOOP_BLOCK]


async def test_cache_reads_writes_and_cost_on_usage(
    server: Server, gateway: Any, anthropic: Fakes
) -> None:
    fake = await anthropic("tool_use")
    fake.count_cache = True
    gateway.notes.prices = load_prices({"claude-fake": PRICE})
    stream = await server.chat("run it")
    assert fake.refusals == []
    first, second = stream.of("usage")
    assert first["cache_write_tokens"] > 0 and first["cached_tokens"] == 0
    assert second["cached_tokens"] > 0
    for usage in (first, second):
        uncached = usage["prompt_tokens"] - usage["cached_tokens"] - usage["cache_write_tokens"]
        expected = (
            uncached * 3.0
            + usage["cached_tokens"] * 0.3
            + usage["cache_write_tokens"] * 3.75
            + usage["completion_tokens"] * 15.0
        ) / 1e6
        assert usage["cost"] == pytest.approx(expected, abs=1e-6)
    assert second["run_cost"] == pytest.approx(first["cost"] + second["cost"], abs=1e-6)
    # every request names its breakpoints: tools, system, the newest block
    sent = fake.requests[1].body
    assert sent["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert sent["system"][-1]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" in sent["messages"][-1]["content"][-1]


async def test_an_unpriced_model_has_no_cost(server: Server, anthropic: Fakes) -> None:
    await anthropic("text")
    stream = await server.chat("hello")
    (usage,) = stream.of("usage")
    assert "cost" not in usage and usage["cached_tokens"] == 0


async def test_max_cost_stops_the_run(server: Server, gateway: Any, anthropic: Fakes) -> None:
    await anthropic("tool_use")
    gateway.notes.prices = load_prices({"claude-fake": PRICE})
    gateway.config.max_cost = 0.0000001
    stream = await server.chat("run it")
    completed = stream.of("run.completed")[0]
    assert completed["reason"] == "budget"
    assert stream.of("run.started")[0]["budget"]["cost"] == 0.0000001
    assert len(stream.of("usage")) == 1  # stopped after the first priced round


async def test_models_listed_cached_and_allowlisted(
    server: Server, gateway: Any, anthropic: Fakes
) -> None:
    scripted = (await server.get("/resolve/api/models")).json()
    assert scripted["models"] == [{"id": "scripted"}] and scripted["default"] == "scripted"
    fake = await anthropic("text")
    listed = (await server.get("/resolve/api/models")).json()
    assert [m["id"] for m in listed["models"]] == [m["id"] for m in fake_anthropic.MODELS]
    assert listed["source"] == "provider" and listed["cached"] is False
    again = (await server.get("/resolve/api/models")).json()
    assert again["cached"] is True
    assert sum(1 for r in fake.requests if r.method == "GET") == 1
    gateway.config.allowed_models = ["claude-haiku-4-5-20251001", "claude-unlisted"]
    allowed = (await server.get("/resolve/api/models")).json()
    assert allowed["models"] == [
        {"id": "claude-haiku-4-5-20251001", "name": "Claude Haiku 4.5", "listed": True},
        {"id": "claude-unlisted", "listed": False},
    ]
    assert allowed["default"] == "claude-haiku-4-5-20251001"


async def test_allowed_models_enforced_at_every_entry_point(
    server: Server, gateway: Any, anthropic: Fakes
) -> None:
    fake = await anthropic("text")
    gateway.config.allowed_models = ["claude-haiku-4-5-20251001"]
    refused = await server.chat("hi", model="claude-opus-4-1")
    assert refused.status == 400
    assert b"claude-haiku-4-5-20251001" in refused.body and b"not allowed" in refused.body
    facade = await server.post(
        "/resolve/v1/chat/completions",
        {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]},
    )
    assert facade.status_code == 400 and "claude-haiku-4-5-20251001" in facade.text
    task = await server.post("/resolve/api/tasks", {"goal": "plan", "model": "gpt-4o"})
    assert task.status_code == 400 and "claude-haiku-4-5-20251001" in task.text
    assert [r for r in fake.requests if r.method == "POST"] == []  # nothing reached the model
    # no model named: the allowed default; an allowed one: that one reaches the provider
    ok = await server.chat("hi")
    assert ok.of("run.started")[0]["model"] == "claude-haiku-4-5-20251001"
    assert fake.requests[-1].body["model"] == "claude-haiku-4-5-20251001"
