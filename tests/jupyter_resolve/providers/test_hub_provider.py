"""c.Resolve.provider = "hub": the user's hub token to the hub service; its refusals in its
own words. Against a fake service over loopback (the real one: tests/hub/test_hub_service.py)."""

from __future__ import annotations

from typing import Any

import pytest

from jupyter_resolve.contracts.errors import ProviderError
from jupyter_resolve.providers import ScriptedProvider
from jupyter_resolve.providers.hub import NOT_ANSWERING, HubProvider, make_hub_provider, usage_of
from tests.fakes import streams
from tests.fakes._server import Part, Reply, json_reply
from tests.fakes.openai_server import DONE, FakeOpenAI, chunk, sse, stream, text_reply
from tests.launcher import free_port

TOKEN = "hub-token-of-alice-0123456789"
BODY: dict[str, Any] = {"messages": [{"role": "user", "content": "hi"}], "stream": True}
OVER = {
    "error": {
        "code": "budget_exceeded",
        "type": "budget_exceeded",
        "message": "alice has used 20 tokens of the daily limit of 20 tokens (day_tokens) on "
        "this hub; it resets at 2026-12-02T00:00:00Z",
        "limit": "day_tokens",
        "limit_value": 20,
        "resets_at": "2026-12-02T00:00:00Z",
    }
}


class FakeService(FakeOpenAI):
    """The hub service's routes, under /services/resolve/."""

    prefix = "/services/resolve/v1"


def hub_provider(fake: FakeOpenAI, backoff: float | None = None) -> HubProvider:
    url = fake.base_url.removesuffix("v1")
    provider = make_hub_provider({"url": url, "token": TOKEN}, "default", None, 5.0, 3, True, "")
    assert isinstance(provider, HubProvider)
    if backoff is not None:
        provider.backoff_base = backoff
    return provider


async def test_the_users_hub_token_goes_to_the_service() -> None:
    async with FakeService("text") as fake:
        provider = hub_provider(fake)
        chunks = await streams.collect(provider, BODY)
        await provider.aclose()
    assert streams.text(chunks)
    (request,) = fake.requests
    assert request.path == "/services/resolve/v1/chat/completions"
    assert request.headers["authorization"] == f"token {TOKEN}"
    assert request.body["model"] == "default"  # the service picks the user's default
    assert provider.describe()["name"] == "hub"
    assert TOKEN not in str(provider.describe())


async def test_over_budget_is_one_clear_error_not_retried() -> None:
    async with FakeService(reply_to=lambda _: json_reply(429, OVER)) as fake:
        provider = hub_provider(fake)
        with pytest.raises(ProviderError) as caught:
            await streams.collect(provider, BODY)
        await provider.aclose()
    error = caught.value
    assert len(fake.requests) == 1  # waiting does not help a budget
    assert error.status == 429 and error.code == "budget_exceeded"
    assert "day_tokens" in error.message and "2026-12-02T00:00:00Z" in error.message
    assert "larger budget" in error.hint and "larger budget" in error.message


async def test_a_service_that_does_not_answer_is_retried_then_one_plain_sentence() -> None:
    page = b"<html><body><h1>503 Service Unavailable</h1>proxy error</body></html>"
    down = Reply(503, [("Content-Type", "text/html")], [Part(page)], transfer="length")
    async with FakeService(reply_to=lambda _: down) as fake:
        provider = hub_provider(fake, backoff=0.01)
        with pytest.raises(ProviderError) as caught:
            await streams.collect(provider, BODY)
        await provider.aclose()
    assert len(fake.requests) == 4  # retried with backoff
    error = caught.value
    assert error.code == "hub_unavailable" and "<" not in error.message
    assert error.message.startswith(NOT_ANSWERING)
    port = free_port()  # nothing listens: the same sentence
    closed = HubProvider(f"http://127.0.0.1:{port}/services/resolve/", TOKEN, "default")
    closed.max_retries, closed.backoff_base = 1, 0.01
    with pytest.raises(ProviderError) as caught:
        await streams.collect(closed, BODY)
    await closed.aclose()
    assert caught.value.code == "hub_unavailable" and NOT_ANSWERING in caught.value.message


async def test_a_stream_cut_before_its_end_is_an_error_not_a_stop() -> None:
    frames = [sse(chunk({"role": "assistant", "content": ""})), sse(chunk({"content": "Hal"}))]
    async with FakeService(reply_to=lambda _: stream(frames)) as fake:
        provider = hub_provider(fake)
        with pytest.raises(ProviderError) as caught:
            await streams.collect(provider, BODY)
        await provider.aclose()
    assert caught.value.code == "hub_stream_cut"
    assert "stopped in the middle of the answer" in caught.value.message


async def test_a_begun_answer_gone_silent_ends_before_the_provider_timeout() -> None:
    """A dead replica behind JupyterHub's proxy: the connection stays open, nothing comes. The
    late piece would end the stream without [DONE] (hub_stream_cut) had nobody been watching."""
    frames = [
        sse(chunk({"role": "assistant", "content": ""})),
        Part(sse(chunk({"content": "late"})), delay=3.0),
    ]
    async with FakeService(reply_to=lambda _: stream(frames)) as fake:
        provider = hub_provider(fake)
        provider.stream_timeout = 0.3
        with pytest.raises(ProviderError) as caught:
            await streams.collect(provider, BODY)
        await provider.aclose()
    assert caught.value.code == "hub_stream_silent", caught.value.code
    assert "stopped in the middle of the answer" in caught.value.message


async def test_keep_alive_comments_keep_a_quiet_answer_going() -> None:
    quiet = [Part(b": keep-alive\n\n", delay=0.1) for _ in range(8)]  # 0.8 s, none silent 0.3 s
    frames = [sse(chunk({"role": "assistant", "content": ""})), *quiet]
    frames += [sse(chunk({"content": "thought"})), sse(chunk({}, "stop")), DONE]
    async with FakeService(reply_to=lambda _: stream(frames)) as fake:
        provider = hub_provider(fake)
        provider.stream_timeout = 0.3
        chunks = await streams.collect(provider, BODY)
        await provider.aclose()
    assert streams.text(chunks) == "thought"


def test_the_stream_timeout_is_a_setting() -> None:
    provider = make_hub_provider(
        {"url": "http://127.0.0.1:1/", "token": TOKEN, "stream_timeout": 7.5},
        "default",
        None,
        5.0,
        3,
        True,
        "",
    )
    assert isinstance(provider, HubProvider) and provider.stream_timeout == 7.5
    from jupyter_resolve.config import Resolve

    assert Resolve().hub_stream_timeout == 45.0


async def test_too_many_requests_in_flight_is_retried() -> None:
    busy = {"error": {"code": "too_many_requests", "message": "alice already has 4 requests"}}
    replies = [json_reply(429, busy, [("Retry-After", "0")]), text_reply()]

    async with FakeService(reply_to=lambda _: replies.pop(0)) as fake:
        provider = hub_provider(fake, backoff=0.01)
        chunks = await streams.collect(provider, BODY)
        await provider.aclose()
    assert streams.text(chunks) and len(fake.requests) == 2


async def test_usage_from_the_service_and_nulls_for_other_providers() -> None:
    usage = {"user": "alice", "day": {"tokens": 3}, "month": {"tokens": 5}}

    def answer(request: Any) -> Reply:
        assert request.headers["authorization"] == f"token {TOKEN}"
        return json_reply(200, usage)

    async with FakeService(reply_to=answer) as fake:
        provider = hub_provider(fake)
        got = await usage_of(provider)
        await provider.aclose()
    assert got == {"provider": "hub", **usage}
    assert fake.requests[0].path == "/services/resolve/usage"
    scripted = await usage_of(ScriptedProvider(None))
    assert scripted == {"provider": "scripted", "user": None, "day": None, "month": None}
