"""The whole chain against fake providers that speak the real wire formats:
client → gateway → agent-httpd → gateway inference endpoint → provider → fake server."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from jupyter_resolve.providers import AnthropicProvider, OpenAIProvider
from tests.conftest import Server
from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.openai_server import ANSWER, AWKWARD_TEXT, TEXT, FakeOpenAI, awkward, text


class Fakes:
    def __init__(self, gateway: Any, stream_raw: bool) -> None:
        self.gateway = gateway
        self.stream_raw = stream_raw
        self.servers: list[Any] = []

    async def openai(self, scenario: str | list[Any], **params: Any) -> FakeOpenAI:
        fake = FakeOpenAI(scenario, **params)
        await fake.start()
        self.servers.append(fake)
        self.gateway.provider = OpenAIProvider(
            fake.base_url,
            "sk-canary-0123456789",
            "fake-model",
            api_key_env="FAKE_KEY",
            max_retries=2,
            backoff_base=0.05,
            timeout=5,
        )
        self.gateway.provider.stream_raw = self.stream_raw
        return fake

    async def anthropic(self, scenario: str) -> FakeAnthropic:
        fake = FakeAnthropic(scenario)
        await fake.start()
        self.servers.append(fake)
        self.gateway.provider = AnthropicProvider(
            fake.base_url, "sk-ant-canary", "claude-fake", max_retries=2, backoff_base=0.05
        )
        return fake


# plain-HTTP providers are read over asyncio (providers/raw_http.py); httpx reads the others
@pytest.fixture(params=["raw", "httpx"])
def fakes(gateway: Any, jp_asyncio_loop: Any, request: pytest.FixtureRequest) -> Iterator[Fakes]:
    holder = Fakes(gateway, stream_raw=request.param == "raw")
    yield holder
    for fake in holder.servers:
        jp_asyncio_loop.run_until_complete(fake.stop())


async def test_openai_text(server: Server, fakes: Fakes) -> None:
    fake = await fakes.openai("text")
    stream = await server.chat("hello")
    assert stream.text() == TEXT
    assert stream.of("usage")[0] == {
        "run_id": stream.events[0].data["run_id"],
        "prompt_tokens": 12,
        "completion_tokens": 8,
        "cached_tokens": 0,
        "cache_write_tokens": 0,
    }  # no cost: fake-model has no price
    assert stream.of("run.completed")[0]["reason"] == "stop"
    sent = fake.requests[0]
    assert sent.headers["authorization"] == "Bearer sk-canary-0123456789"
    assert sent.body["stream"] is True
    assert sent.body["messages"][-1] == {"role": "user", "content": "hello"}
    assert sent.body["messages"][0]["role"] == "system"
    assert "Tool discipline" in sent.body["messages"][0]["content"]


async def test_openai_awkward_stream(server: Server, fakes: Fakes) -> None:
    await fakes.openai([*awkward(), *text()])
    stream = await server.chat("be awkward")
    assert stream.text() == AWKWARD_TEXT + TEXT
    assert "".join(d["text"] for d in stream.of("reasoning.delta")) == "Thinking é"
    call = stream.of("tool.requested")[0]
    assert call["name"] == "python" and call["arguments"] == {"code": "print('héllo')"}
    usage = stream.of("usage")
    assert usage and usage[0]["completion_tokens"] == 8


async def test_openai_tool_call_then_answer(server: Server, fakes: Fakes) -> None:
    fake = await fakes.openai("tool_call")
    stream = await server.chat("compute 6*7")
    assert stream.of("tool.requested")[0]["arguments"] == {"code": "print(6*7)"}
    assert stream.of("tool.completed")[0]["output"] == "42"
    assert stream.text().endswith(ANSWER)
    second = fake.requests[1].body["messages"]
    assert second[-2]["role"] == "assistant" and second[-2]["tool_calls"][0]["id"] == "call_fake1"
    assert second[-1]["role"] == "tool" and second[-1]["tool_call_id"] == "call_fake1"


async def test_parallel_calls_on_one_index_are_two_calls(server: Server, fakes: Fakes) -> None:
    await fakes.openai("parallel_ollama")
    stream = await server.chat("two things")
    names = [c["name"] for c in stream.of("tool.requested")]
    assert names == ["python", "read_file"]
    assert stream.text() == ANSWER


async def test_midstream_error_reaches_client(server: Server, fakes: Fakes) -> None:
    await fakes.openai("midstream_error")
    stream = await server.chat("x")
    errors = stream.of("run.error")
    assert errors and "crashed mid-answer" in errors[0]["message"]
    assert stream.of("run.completed")[0]["reason"] == "error"


async def test_500_then_success_is_retried(server: Server, fakes: Fakes) -> None:
    fake = await fakes.openai("flaky_500")
    stream = await server.chat("x")
    assert stream.text() == TEXT
    assert len(fake.requests) == 2
    assert not stream.of("run.error")


@pytest.mark.parametrize(
    ("scenario", "words"),
    [("unauthorized", ["Incorrect API key", "FAKE_KEY"]), ("model_not_found", ["does not exist"])],
)
async def test_provider_errors_say_what_to_check(
    server: Server, fakes: Fakes, scenario: str, words: list[str]
) -> None:
    await fakes.openai(scenario)
    stream = await server.chat("x")
    message = stream.of("run.error")[0]["message"]
    for word in words:
        assert word in message
    assert "sk-canary" not in message
    done = stream.of("run.completed")[0]
    assert done["reason"] == "error"
    assert done["summary"]["last_error"] == message


async def test_connection_refused_is_a_clear_error(server: Server, gateway: Any) -> None:
    gateway.provider = OpenAIProvider("http://127.0.0.1:9/v1", None, "m", max_retries=0)
    stream = await server.chat("x")
    message = stream.of("run.error")[0]["message"]
    assert "127.0.0.1:9" in message and "base_url" in message


async def test_anthropic_text_and_thinking(server: Server, fakes: Fakes) -> None:
    fake = await fakes.anthropic("thinking")
    stream = await server.chat("think")
    assert stream.of("reasoning.delta")
    assert stream.text()
    assert stream.of("run.completed")[0]["reason"] == "stop"
    assert fake.requests[0].headers["x-api-key"] == "sk-ant-canary"
    assert "Tool discipline" in fake.requests[0].body["system"][0]["text"]  # a cached block


async def test_anthropic_tool_use(server: Server, fakes: Fakes) -> None:
    fake = await fakes.anthropic("tool_use")
    stream = await server.chat("use a tool")
    assert stream.of("tool.requested")
    assert stream.text()
    follow_up = fake.requests[1].body["messages"]
    assert follow_up[-1]["role"] == "user"
    assert follow_up[-1]["content"][0]["type"] == "tool_result"
