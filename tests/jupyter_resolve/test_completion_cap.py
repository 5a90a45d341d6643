"""Inline completion is capped per person (issue 44.6): a real server with two people (the
IdentityProvider of tests/jupyter_resolve/people.py) and a provider that never answers. Alice's
requests beyond ``c.Resolve.completion_max_concurrent`` answer 429 ``too_many_completions``
without reaching the provider, while Bob's still go; a newer request for one of her cells
replaces its older one rather than being refused; a place freed is taken again."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from jupyter_resolve.providers import OpenAIProvider
from tests.conftest import Server
from tests.fakes._server import Reply
from tests.fakes.openai_server import FakeOpenAI
from tests.jupyter_resolve.people import Grants, People

URL = "/resolve/api/completion"
TOKENS = {"alice-completes-7c2e": "alice", "bob-completes-1f9a": "bob"}


@pytest.fixture
def jp_server_config(jp_server_config: dict[str, Any]) -> dict[str, Any]:
    server_app = {
        **jp_server_config["ServerApp"],
        "identity_provider_class": People,
        "authorizer_class": Grants,
    }
    return {**jp_server_config, "ServerApp": server_app, "People": {"tokens": TOKENS}}


@pytest.fixture
def upstream(gateway: Any, jp_asyncio_loop: Any) -> Iterator[FakeOpenAI]:
    fake = FakeOpenAI(reply_to=lambda _: Reply(hang=True))
    jp_asyncio_loop.run_until_complete(fake.start())
    gateway.provider = OpenAIProvider(fake.base_url, "sk-test", "chat-model", max_retries=0)
    gateway.config.completion_model = "fake-coder"
    gateway.config.completion_style = "suffix"
    gateway.config.completion_max_concurrent = 2
    yield fake
    jp_asyncio_loop.run_until_complete(fake.stop())


def person(server: Server, name: str) -> Server:
    token = next(t for t, n in TOKENS.items() if n == name)
    return Server(server.base, token)


async def until_upstream_has(fake: FakeOpenAI, count: int) -> None:
    while len(fake.requests) < count:
        await asyncio.sleep(0.02)


async def test_one_persons_requests_are_capped_and_anothers_are_not(
    server: Server, upstream: FakeOpenAI, jp_serverapp: Any
) -> None:
    alice, bob = person(server, "alice"), person(server, "bob")
    waiting: list[asyncio.Future[httpx.Response]] = []

    def ask(who: Server, cell: str) -> asyncio.Future[httpx.Response]:
        waiting.append(asyncio.ensure_future(who.post(URL, {"prefix": "a = ", "cell_id": cell})))
        return waiting[-1]

    try:
        ask(alice, "c1"), ask(alice, "c2")
        await until_upstream_has(upstream, 2)
        refused = await alice.post(URL, {"prefix": "a = ", "cell_id": "c3"})
        assert refused.status_code == 429, refused.text
        assert refused.json()["error"]["code"] == "too_many_completions"
        assert "completion_max_concurrent" in refused.json()["error"]["message"]
        assert refused.headers["Retry-After"] == "1"
        assert len(upstream.requests) == 2  # the refused one never went upstream
        ask(bob, "c1")  # another person: not alice's cap
        await until_upstream_has(upstream, 3)
        replaced = waiting[0]
        ask(alice, "c1")  # typing on in c1: the newer replaces the older, within the cap
        await until_upstream_has(upstream, 4)
        stale = await replaced
        assert stale.status_code == 409 and stale.json()["error"]["code"] == "cancelled"
        again = await alice.post(URL, {"prefix": "a = ", "cell_id": "c4"})
        assert again.status_code == 429  # still two of hers in flight: c1 (newer) and c2
        waiting[1].cancel()  # her c2's client goes away: its place is freed
        state = jp_serverapp.web_app.settings["resolve_completion"]
        while len(state.by_user["alice"]) > 1:
            await asyncio.sleep(0.02)
        ask(alice, "c5")
        await until_upstream_has(upstream, 5)
    finally:
        for request in waiting:
            request.cancel()
        await asyncio.gather(*waiting, return_exceptions=True)
