"""OpenAIProvider against the fake OpenAI-compatible server, over real loopback HTTP."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from jupyter_resolve.contracts.errors import ProviderError
from jupyter_resolve.providers import OpenAIProvider
from tests.fakes import openai_server as fake_openai
from tests.fakes import streams
from tests.fakes._server import Part, Reply
from tests.fakes.openai_server import FakeOpenAI, chunk, error, sse, stream
from tests.launcher import free_port

KEY = "sk-test-secret-key-123456"
BODY: dict[str, Any] = {
    "model": "runtime-model",
    "messages": [{"role": "user", "content": "hi"}],
    "tools": [{"type": "function", "function": {"name": "python", "parameters": {}}}],
    "stream": True,
    "stream_options": {"include_usage": True},
}


def provider(fake: FakeOpenAI, **kw: Any) -> OpenAIProvider:
    options: dict[str, Any] = {
        "timeout": 2.0,
        "backoff_base": 0.01,
        "backoff_cap": 0.05,
        "api_key_env": "TEST_OPENAI_KEY",
    }
    options.update(kw)
    return OpenAIProvider(fake.base_url, KEY, "fake-model", **options)


async def failure(p: OpenAIProvider, body: dict[str, Any] = BODY) -> ProviderError:
    with pytest.raises(ProviderError) as caught:
        await streams.collect(p, body)
    await p.aclose()
    error = caught.value
    assert KEY not in error.message and KEY not in error.hint and KEY not in str(error.to_json())
    return error


async def test_text_stream_and_request() -> None:
    async with FakeOpenAI("text") as fake:
        p = provider(fake)
        chunks = await streams.collect(p, BODY, "run-1")
        await p.aclose()
    assert streams.text(chunks) == fake_openai.TEXT
    assert streams.finish_reasons(chunks) == ["stop"]
    assert streams.usage(chunks) == [
        {"prompt_tokens": 12, "completion_tokens": 8, "total_tokens": 20}
    ]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    (request,) = fake.requests
    assert request.method == "POST" and request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.body["model"] == "runtime-model"  # the run's model; "fake-model" if none
    assert request.body["stream"] is True
    assert request.body["stream_options"] == {"include_usage": True}
    assert request.body["messages"] == BODY["messages"]


async def test_body_model_kept_without_configured_model_and_no_key_header() -> None:
    async with FakeOpenAI("text") as fake:
        p = OpenAIProvider(fake.base_url, None, "", stream_usage=False)
        await streams.collect(p, BODY)
        await p.aclose()
    (request,) = fake.requests
    assert request.body["model"] == "runtime-model"
    assert "stream_options" not in request.body
    assert "authorization" not in request.headers


async def test_tool_call_then_text() -> None:
    async with FakeOpenAI("tool_call") as fake:
        p = provider(fake)
        first = await streams.collect(p, BODY, "run")
        second = await streams.collect(p, BODY, "run")
        await p.aclose()
    (call,) = streams.tool_calls(first)
    assert call == {"id": "call_fake1", "name": "python", "arguments": {"code": "print(6*7)"}}
    assert streams.finish_reasons(first) == ["tool_calls"]
    assert streams.text(second) == fake_openai.ANSWER
    assert len(fake.requests) == 2


async def test_awkward_stream() -> None:
    async with FakeOpenAI("awkward") as fake:
        p = provider(fake)
        chunks = await streams.collect(p, BODY)
        await p.aclose()
    assert streams.reasoning(chunks) == fake_openai.AWKWARD_REASONING
    assert not any("reasoning" in d for d in streams.deltas(chunks))
    assert streams.text(chunks) == fake_openai.AWKWARD_TEXT
    (call,) = streams.tool_calls(chunks)
    assert call["name"] == "python" and call["id"] == "call_awk"
    assert call["arguments"] == json.loads(fake_openai.AWKWARD_ARGUMENTS)
    usage_chunks = [c for c in chunks if c.get("usage")]
    assert len(usage_chunks) == 2 and all(c["choices"] == [] for c in usage_chunks)
    assert streams.finish_reasons(chunks) == ["tool_calls"]


async def test_parallel_calls_on_one_index_are_renumbered() -> None:
    async with FakeOpenAI("parallel_ollama") as fake:
        p = provider(fake)
        chunks = await streams.collect(p, BODY)
        await p.aclose()
    indexes = [
        (t["id"], t["index"]) for d in streams.deltas(chunks) for t in d.get("tool_calls", [])
    ]
    assert indexes == [("call_a", 0), ("call_b", 1)]
    calls = streams.tool_calls(chunks)
    assert [c["name"] for c in calls] == ["python", "read_file"]
    assert calls[1]["arguments"] == {"path": "a.txt"}
    assert streams.finish_reasons(chunks) == ["stop"]  # Ollama says stop; the calls decide


async def test_midstream_error_after_chunks() -> None:
    async with FakeOpenAI("midstream_error") as fake:
        p = provider(fake)
        seen: list[dict[str, Any]] = []
        with pytest.raises(ProviderError) as caught:
            async for c in p.stream_chat(BODY, None):
                seen.append(c)
        await p.aclose()
    assert streams.text(seen) == "Partial"
    assert caught.value.code == "provider_stream_error"
    assert "The model crashed mid-answer." in caught.value.message


async def test_flaky_500_is_retried() -> None:
    async with FakeOpenAI("flaky_500") as fake:
        p = provider(fake)
        chunks = await streams.collect(p, BODY)
        await p.aclose()
    assert streams.text(chunks) == fake_openai.TEXT
    assert len(fake.requests) == 2


async def test_500_retries_exhausted() -> None:
    only_500 = [error(500, "Backend exploded.", "server_error")]
    async with FakeOpenAI(only_500) as fake:
        err = await failure(provider(fake, max_retries=2))
    assert err.code == "provider_server_error" and err.status == 500 and err.retryable
    assert "Backend exploded." in err.message and "3 attempts" in err.message
    assert len(fake.requests) == 3


async def test_rate_limited_honours_retry_after_capped() -> None:
    async with FakeOpenAI("rate_limited") as fake:
        p = provider(fake, backoff_cap=0.05)
        loop = asyncio.get_running_loop()
        start = loop.time()
        chunks = await streams.collect(p, BODY)
        elapsed = loop.time() - start
        await p.aclose()
    assert streams.text(chunks) == fake_openai.TEXT
    assert len(fake.requests) == 2
    assert elapsed < 0.9  # Retry-After: 1 was capped by backoff_cap


async def test_rate_limited_without_retries() -> None:
    async with FakeOpenAI("rate_limited") as fake:
        err = await failure(provider(fake, max_retries=0))
    assert err.code == "provider_rate_limited" and err.status == 429
    assert err.retry_after == 1.0
    assert "Rate limit reached" in err.message


async def test_unauthorized_names_the_env_var_never_the_key() -> None:
    async with FakeOpenAI("unauthorized") as fake:
        p = provider(fake)
        err = await failure(p)
        described = json.dumps(p.describe())
    assert err.code == "provider_auth" and err.status == 401
    assert "Incorrect API key provided" in err.message
    assert "TEST_OPENAI_KEY" in err.hint
    assert len(fake.requests) == 1  # not retried
    assert KEY not in described
    assert p.describe()["api_key_set"] is True


async def test_key_echoed_by_the_provider_is_blanked() -> None:
    echo = [error(401, f"Incorrect API key provided: {KEY}.", "invalid_request_error")]
    async with FakeOpenAI(echo) as fake:
        err = await failure(provider(fake))
    assert "Incorrect API key provided: ***" in err.message


async def test_model_not_found() -> None:
    async with FakeOpenAI("model_not_found") as fake:
        err = await failure(provider(fake))
    assert err.code == "provider_not_found" and err.status == 404
    assert "does not exist" in err.message
    assert err.hint == "check c.Resolve.model and c.Resolve.base_url"


async def test_other_4xx_is_rejected_with_the_provider_message() -> None:
    bad = [error(400, "Unrecognized request argument: stream_options", "invalid_request_error")]
    async with FakeOpenAI(bad) as fake:
        err = await failure(provider(fake))
    assert err.code == "provider_rejected" and err.status == 400
    assert "stream_options" in err.message and "stream_usage" in err.hint


async def test_hang_times_out() -> None:
    async with FakeOpenAI("hang") as fake:
        err = await failure(provider(fake, timeout=0.3))
    assert err.code == "provider_timeout" and err.status == 504


async def test_connection_refused() -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    err = await failure(OpenAIProvider(url, KEY, "m", timeout=2.0))
    assert err.code == "provider_unreachable" and err.status == 502
    assert url in err.message
    assert err.hint == "check c.Resolve.base_url and that the server is running"


async def test_long_stream() -> None:
    async with FakeOpenAI("long", chunks=500) as fake:
        p = provider(fake)
        chunks = await streams.collect(p, BODY)
        await p.aclose()
    assert streams.text(chunks) == "".join(f"tok{i} " for i in range(500))


async def test_eof_without_done_and_crlf_and_single_newlines() -> None:
    frames = [
        sse(chunk({"role": "assistant", "content": ""})).replace(b"\n", b"\r\n"),
        # two objects separated by a single newline (a broken server), in one write
        b'data: {"choices":[{"index":0,"delta":{"content":"a"}}]}\n'
        b'data: {"choices":[{"index":0,"delta":{"content":"b"}}]}\n\n',
        sse(chunk({}, "stop")),
    ]
    async with FakeOpenAI([stream(frames, transfer="close")]) as fake:
        p = provider(fake)
        chunks = await streams.collect(p, BODY)
        await p.aclose()
    assert streams.text(chunks) == "ab"
    assert streams.finish_reasons(chunks) == ["stop"]


async def test_event_split_at_every_byte() -> None:
    payload = sse(chunk({"content": "héllo 🎉"})) + b"data: [DONE]\n\n"
    parts = [Part(payload[i : i + 1]) for i in range(len(payload))]
    async with FakeOpenAI([Reply(200, [("Content-Type", "text/event-stream")], parts)]) as fake:
        p = provider(fake)
        chunks = await streams.collect(p, BODY)
        await p.aclose()
    assert streams.text(chunks) == "héllo 🎉"


async def test_non_streaming_json_answer_becomes_chunks() -> None:
    completion = {
        "id": "chatcmpl-x",
        "object": "chat.completion",
        "model": "m",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "whole"},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
    }
    async with FakeOpenAI(
        [
            Reply(
                200,
                [("Content-Type", "application/json")],
                [Part(json.dumps(completion).encode())],
                "length",
            )
        ]
    ) as fake:
        p = provider(fake)
        chunks = await streams.collect(p, BODY)
        await p.aclose()
    assert streams.text(chunks) == "whole"
    assert streams.usage(chunks)[0]["prompt_tokens"] == 3


def test_describe_shape() -> None:
    p = OpenAIProvider("http://127.0.0.1:1/v1/", KEY, "m", api_key_env="X_KEY")
    assert p.describe() == {
        "name": "openai",
        "model": "m",
        "base_url": "http://127.0.0.1:1/v1",
        "api_key_env": "X_KEY",
        "api_key_set": True,
        "stream_usage": True,
    }
    assert OpenAIProvider("http://x/v1", None, "m").describe()["api_key_set"] is False


async def test_consumer_stopping_early_releases_the_connection() -> None:
    async with FakeOpenAI("long", chunks=200) as fake:
        p = provider(fake)
        first = p.stream_chat(BODY, None)
        async for _ in first:
            break
        await first.aclose()  # type: ignore[attr-defined]
        chunks = await streams.collect(p, BODY)
        await p.aclose()
    assert streams.text(chunks).startswith("tok0 tok1 ")
    assert len(fake.requests) == 2
