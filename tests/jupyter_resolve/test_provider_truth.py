"""What health and a failed run say about the provider (issue 30.6): reachable or not, in
plain words, with the setting to change; the server log gives the reason of a failed call.
A real server, a real agent-httpd, fake providers speaking the OpenAI wire format, and a
loopback port nothing listens on."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest

from jupyter_resolve.contracts.errors import ProviderError
from jupyter_resolve.magics.status_view import provider_trouble
from jupyter_resolve.providers import OpenAIProvider
from jupyter_resolve.providers.reachability import plain_failure
from tests.conftest import Server, Stream
from tests.fakes.openai_server import FakeOpenAI
from tests.launcher import free_port

KEY = "sk-canary-0123456789"


@pytest.fixture
def fakes(jp_asyncio_loop: Any) -> Iterator[list[FakeOpenAI]]:
    started: list[FakeOpenAI] = []
    yield started
    for fake in started:
        jp_asyncio_loop.run_until_complete(fake.stop())


async def fake_provider(gateway: Any, fakes: list[FakeOpenAI], scenario: str) -> FakeOpenAI:
    fake = FakeOpenAI(scenario)
    await fake.start()
    fakes.append(fake)
    gateway.provider = OpenAIProvider(
        fake.base_url, KEY, "fake-model", api_key_env="FAKE_KEY", max_retries=0, timeout=5
    )
    return fake


def closed_port_url(userinfo: str = "") -> str:
    return f"http://{userinfo}127.0.0.1:{free_port()}/v1"


async def provider_health(server: Server) -> dict[str, Any]:
    response = await server.get("/resolve/api/health")
    assert response.status_code == 200, response.text
    provider: dict[str, Any] = response.json()["provider"]
    return provider


def one_error(stream: Stream) -> str:
    errors = stream.of("run.error")
    assert len(errors) == 1, errors  # said once
    assert stream.of("run.completed")[0]["reason"] == "error"
    message: str = errors[0]["message"]
    assert KEY not in message
    return message


def warnings_of(caplog: pytest.LogCaptureFixture) -> str:
    return "\n".join(r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)


async def test_scripted_model_is_not_checked(server: Server) -> None:
    provider = await provider_health(server)
    assert provider["name"] == "scripted"
    assert {k: provider[k] for k in ("reachable", "error", "setting", "checked_at")} == {
        "reachable": None,
        "error": None,
        "setting": None,
        "checked_at": None,
    }


async def test_a_closed_port_is_unreachable_in_plain_words(server: Server, gateway: Any) -> None:
    url = closed_port_url()
    gateway.provider = OpenAIProvider(url, None, "m", api_key_env="NOPE_KEY")
    provider = await provider_health(server)
    assert provider["reachable"] is False
    assert provider["error"] == f"nothing answers at {url}: connection refused"
    assert provider["setting"] == "c.Resolve.base_url"
    assert isinstance(provider["checked_at"], float)
    # %resolve status says it on the provider's line
    said = f" — nothing answers at {url}: connection refused (c.Resolve.base_url)"
    assert provider_trouble(provider) == said


async def test_a_listening_provider_is_reachable_without_a_request(
    server: Server, gateway: Any, fakes: list[FakeOpenAI]
) -> None:
    fake = await fake_provider(gateway, fakes, "text")
    provider = await provider_health(server)
    assert provider["reachable"] is True
    assert provider["error"] is None and provider["setting"] is None
    assert fake.requests == []  # a connect only: no key sent, no scripted answer used up


async def test_a_refused_key_is_one_plain_error_and_a_logged_reason(
    server: Server, gateway: Any, fakes: list[FakeOpenAI], caplog: pytest.LogCaptureFixture
) -> None:
    fake = await fake_provider(gateway, fakes, "unauthorized")
    with caplog.at_level(logging.WARNING):
        stream = await server.chat("x")
    message = one_error(stream)
    assert message.startswith("the provider refused the key in $FAKE_KEY: Incorrect API key")
    assert message.endswith("(c.Resolve.api_key_env)")
    logged = warnings_of(caplog)
    assert f"inference failed (run {stream.of('run.started')[0]['run_id']}): 401" in logged
    assert f"{fake.base_url}/chat/completions" in logged and "Incorrect API key" in logged
    assert KEY not in logged
    provider = await provider_health(server)
    assert provider["reachable"] is True  # it answered: the key is what is wrong
    assert provider["error"].startswith("the provider refused the key in $FAKE_KEY")
    assert provider["setting"] == "c.Resolve.api_key_env"


async def test_an_unknown_model_names_the_model_setting(
    server: Server, gateway: Any, fakes: list[FakeOpenAI]
) -> None:
    await fake_provider(gateway, fakes, "model_not_found")
    message = one_error(await server.chat("x"))
    assert message.startswith("the provider has no model 'fake-model': The model `nope`")
    assert message.endswith("(c.Resolve.model)")


async def test_a_closed_port_fails_a_run_in_plain_words(
    server: Server, gateway: Any, caplog: pytest.LogCaptureFixture
) -> None:
    url = closed_port_url("user:hunter2secret@")
    shown = url.replace("user:hunter2secret@", "")
    gateway.provider = OpenAIProvider(url, None, "m", max_retries=0)
    with caplog.at_level(logging.WARNING):
        stream = await server.chat("x")
    message = one_error(stream)
    assert message == f"nothing answers at {shown}: connection refused (c.Resolve.base_url)"
    logged = warnings_of(caplog)
    assert "inference failed" in logged and "502 provider_unreachable" in logged
    assert f"{shown}/chat/completions" in logged and "hunter2secret" not in logged
    provider = await provider_health(server)
    assert provider["reachable"] is False and provider["setting"] == "c.Resolve.base_url"
    assert provider["base_url"] == shown and "hunter2secret" not in json.dumps(provider)
    models = (await server.get("/resolve/api/models")).json()
    assert shown in models["error"]["message"] and "hunter2secret" not in json.dumps(models)


async def test_a_success_clears_an_earlier_failure(
    server: Server, gateway: Any, fakes: list[FakeOpenAI]
) -> None:
    fake = FakeOpenAI("text")
    await fake.start()
    fakes.append(fake)
    gateway.provider = OpenAIProvider(fake.base_url, KEY, "fake-model", max_retries=0)
    failure = ProviderError("it broke", code="provider_server_error", status=500)
    gateway.provider_health.failed(gateway.provider, failure, None)
    assert (await provider_health(server))["error"] is not None
    stream = await server.chat("x")
    assert not stream.of("run.error")
    provider = await provider_health(server)
    assert provider["reachable"] is True and provider["error"] is None


@pytest.mark.parametrize(
    ("error", "described", "expected"),
    [
        (
            ProviderError("x answered 401: no", code="provider_auth", status=401, detail="no"),
            {"api_key_env": "MY_KEY", "api_key_set": False},
            ("no API key is set: $MY_KEY is empty or unset", "c.Resolve.api_key_env", True),
        ),
        (
            ProviderError("x answered 404", code="provider_not_found", detail="Not Found"),
            {"base_url": "http://h:1/api", "model": "m"},
            (
                "nothing at http://h:1/api answers chat completions: Not Found",
                "c.Resolve.base_url",
                True,
            ),
        ),
        (
            ProviderError("x did not answer within 5 s", code="provider_timeout", status=504),
            {"base_url": "https://u:pw@h/v1?api_key=abc"},
            (
                "nothing answered at https://h/v1?api_key=*** in time "
                "(x did not answer within 5 s)",
                "c.Resolve.provider_timeout",
                False,
            ),
        ),
    ],
)
def test_plain_words(
    error: ProviderError, described: dict[str, Any], expected: tuple[str, str, bool]
) -> None:
    failure = plain_failure(error, described)
    assert (failure.error, failure.setting, failure.reachable) == expected
