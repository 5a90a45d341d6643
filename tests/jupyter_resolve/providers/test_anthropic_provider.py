"""AnthropicProvider against the fake Messages API server, over real loopback HTTP."""

from __future__ import annotations

from typing import Any

import pytest

from jupyter_resolve.contracts.errors import ProviderError
from jupyter_resolve.providers import AnthropicProvider
from tests.fakes import anthropic_server as fake_anthropic
from tests.fakes import streams
from tests.fakes.anthropic_server import FakeAnthropic

KEY = "sk-ant-test-secret-987654"
BODY: dict[str, Any] = {
    "model": "runtime-model",
    "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}],
    "tools": [{"type": "function", "function": {"name": "python", "parameters": {}}}],
    "stream": True,
    "stream_options": {"include_usage": True},
}


def provider(fake: FakeAnthropic, **kw: Any) -> AnthropicProvider:
    options: dict[str, Any] = {
        "timeout": 2.0,
        "backoff_base": 0.01,
        "backoff_cap": 0.05,
        "api_key_env": "TEST_ANTHROPIC_KEY",
    }
    options.update(kw)
    return AnthropicProvider(fake.base_url, KEY, "claude-test", **options)


async def test_text_and_request_shape() -> None:
    async with FakeAnthropic("text") as fake:
        p = provider(fake)
        chunks = await streams.collect(p, BODY)
        await p.aclose()
    assert streams.text(chunks) == fake_anthropic.TEXT
    assert streams.finish_reasons(chunks) == ["stop"]
    assert streams.usage(chunks)[0]["prompt_tokens"] == fake_anthropic.INPUT_TOKENS
    (request,) = fake.requests
    assert request.path == "/v1/messages"
    assert request.headers["x-api-key"] == KEY
    assert request.headers["anthropic-version"] == "2023-06-01"
    # the runtime's model wins: it is the one the run chose (the request's, or the default)
    assert request.body["model"] == "runtime-model" and request.body["stream"] is True
    assert request.body["system"] == [
        {"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}
    ]
    assert request.body["tools"][0]["name"] == "python"


async def test_tool_use_then_text() -> None:
    async with FakeAnthropic("tool_use") as fake:
        p = provider(fake)
        first = await streams.collect(p, BODY)
        second = await streams.collect(p, BODY)
        await p.aclose()
    assert streams.text(first) == "I'll run it."
    assert streams.tool_calls(first) == [
        {"id": "toolu_fake1", "name": "python", "arguments": {"code": fake_anthropic.TOOL_CODE}}
    ]
    assert streams.finish_reasons(first) == ["tool_calls"]
    assert streams.text(second) == fake_anthropic.ANSWER


async def test_thinking() -> None:
    async with FakeAnthropic("thinking") as fake:
        p = provider(fake)
        chunks = await streams.collect(p, BODY)
        await p.aclose()
    assert streams.reasoning(chunks) == fake_anthropic.THINKING
    assert streams.text(chunks) == fake_anthropic.ANSWER


async def test_error_event_mid_stream() -> None:
    async with FakeAnthropic("error_event") as fake:
        p = provider(fake)
        seen: list[dict[str, Any]] = []
        with pytest.raises(ProviderError) as caught:
            async for c in p.stream_chat(BODY, None):
                seen.append(c)
        await p.aclose()
    assert streams.text(seen) == "Partial"
    assert caught.value.code == "provider_stream_error" and "Overloaded" in caught.value.message


async def test_529_is_retried() -> None:
    async with FakeAnthropic("overloaded_529_then_text") as fake:
        p = provider(fake)
        chunks = await streams.collect(p, BODY)
        await p.aclose()
    assert streams.text(chunks) == fake_anthropic.TEXT and len(fake.requests) == 2


async def test_529_without_retries() -> None:
    async with FakeAnthropic("overloaded_529_then_text") as fake:
        p = provider(fake, max_retries=0)
        with pytest.raises(ProviderError) as caught:
            await streams.collect(p, BODY)
        await p.aclose()
    assert caught.value.code == "provider_server_error" and caught.value.status == 529
    assert "Overloaded" in caught.value.message


async def test_unauthorized() -> None:
    async with FakeAnthropic("unauthorized") as fake:
        p = provider(fake)
        with pytest.raises(ProviderError) as caught:
            await streams.collect(p, BODY)
        await p.aclose()
    err = caught.value
    assert err.code == "provider_auth" and "invalid x-api-key" in err.message
    assert "TEST_ANTHROPIC_KEY" in err.hint
    assert KEY not in err.message + err.hint + str(p.describe())
    assert p.describe()["name"] == "anthropic" and p.describe()["api_key_set"] is True
