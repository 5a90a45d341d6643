"""Inline completion through the gateway (issue 35): a real server, the fake OpenAI server
recording what each style sends (prefix, suffix, model, key)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from jupyter_resolve.providers import OpenAIProvider
from jupyter_resolve.providers.anthropic import AnthropicProvider
from tests.conftest import Server
from tests.fakes._server import Reply, Request, json_reply
from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.openai_server import DONE, FakeOpenAI, sse, stream

URL = "/resolve/api/completion"


@pytest.fixture
def fakes(gateway: Any, jp_asyncio_loop: Any) -> Iterator[list[FakeOpenAI]]:
    holder: list[FakeOpenAI] = []
    yield holder
    for fake in holder:
        jp_asyncio_loop.run_until_complete(fake.stop())


async def provider(
    gateway: Any, holder: list[FakeOpenAI], reply_to: Callable[[Request], Reply]
) -> FakeOpenAI:
    fake = FakeOpenAI(reply_to=reply_to)
    await fake.start()
    holder.append(fake)
    gateway.provider = OpenAIProvider(fake.base_url, "sk-test", "chat-model", max_retries=0)
    gateway.config.completion_model = "fake-coder"
    return fake


class Person:
    """One person's client: the login cookie the token request set keeps the same user (a
    token alone makes a new anonymous user per request)."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.client = server.client()

    async def post(self, body: dict[str, Any]) -> httpx.Response:
        content = json.dumps(body).encode()
        return await self.client.post(URL, content=content, headers=self.server.auth)

    async def usage(self) -> dict[str, Any]:
        response = await self.client.get(URL + "/usage", headers=self.server.auth)
        answer: dict[str, Any] = response.json()
        return answer


def completions(text: str) -> Callable[[Request], Reply]:
    """The legacy/FIM answer: ``choices[0].text``."""
    usage = {"prompt_tokens": 20, "completion_tokens": 5}
    return lambda _: json_reply(200, {"choices": [{"text": text}], "usage": usage})


def chat(content: str) -> Callable[[Request], Reply]:
    message = {"role": "assistant", "content": content}
    usage = {"prompt_tokens": 30, "completion_tokens": 9}
    return lambda _: json_reply(200, {"choices": [{"message": message}], "usage": usage})


async def test_suffix_style_sends_prefix_suffix_model_and_key(
    server: Server, gateway: Any, fakes: list[FakeOpenAI]
) -> None:
    fake = await provider(gateway, fakes, completions("numpy as np\n\n\nimport pandas"))
    gateway.config.completion_style = "suffix"
    body = {"prefix": "x = 1\nimport ", "suffix": "\nprint(np)", "cell_id": "c1"}
    person = Person(server)
    response = await person.post(body)
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["items"] == [{"insertText": "numpy as np"}]  # cut at the blank stretch
    assert answer["model"] == "fake-coder"
    sent = fake.requests[0]
    assert sent.path == "/v1/completions"
    assert sent.headers["authorization"] == "Bearer sk-test"
    assert sent.body["prompt"] == "x = 1\nimport "
    assert sent.body["suffix"] == "\nprint(np)"
    assert sent.body["model"] == "fake-coder"
    assert sent.body["max_tokens"] <= 128 and "```" in sent.body["stop"]
    usage = await person.usage()
    assert usage["requests"] == 1 and usage["prompt_tokens"] == 20


async def test_fim_style_posts_to_the_fim_endpoint(
    server: Server, gateway: Any, fakes: list[FakeOpenAI]
) -> None:
    fake = await provider(gateway, fakes, completions("range(10):"))
    gateway.config.completion_model = "codestral-latest"  # auto: the FIM family
    response = await server.post(URL, {"prefix": "for i in ", "suffix": "\n    pass"})
    assert response.json()["items"] == [{"insertText": "range(10):"}]
    sent = fake.requests[0]
    assert sent.path == "/v1/fim/completions"
    assert sent.body["prompt"] == "for i in " and sent.body["suffix"] == "\n    pass"
    assert sent.body["model"] == "codestral-latest"
    assert sent.headers["authorization"] == "Bearer sk-test"


async def test_chat_style_marks_the_cursor_and_strips_fence_and_prefix(
    server: Server, gateway: Any, fakes: list[FakeOpenAI]
) -> None:
    fake = await provider(gateway, fakes, chat("```python\nimport numpy as np\n```"))
    gateway.config.completion_style = "chat"
    body = {"prefix": "import ", "suffix": "\nnp.zeros(3)", "language": "python"}
    response = await server.post(URL, body)
    assert response.json()["items"] == [{"insertText": "numpy as np"}]
    sent = fake.requests[0]
    assert sent.path == "/v1/chat/completions"
    assert "import <CURSOR>\nnp.zeros(3)" in sent.body["messages"][-1]["content"]
    assert sent.body["model"] == "fake-coder"
    assert sent.headers["authorization"] == "Bearer sk-test"


def streamed(*pieces: str) -> Callable[[Request], Reply]:
    """A streamed legacy completion: one ``choices[0].text`` per frame, then the usage."""
    frames = [sse({"choices": [{"index": 0, "text": p}]}) for p in pieces]
    frames.append(sse({"choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": 5}}))
    return lambda _: stream([*frames, DONE])


async def test_stream_passes_the_providers_pieces_on_and_stops_at_the_block_end(
    server: Server, gateway: Any, fakes: list[FakeOpenAI]
) -> None:
    fake = await provider(gateway, fakes, streamed("np", ".zeros", "(3)\n\n", "\nnext = 1"))
    gateway.config.completion_style = "suffix"
    answer = await server.stream(URL, {"prefix": "x = ", "stream": True})
    assert answer.status == 200
    types = [e.event for e in answer.events]
    assert types[-1] == "completion.done" and types.count("completion.delta") >= 3
    text = "".join(e.data["text"] for e in answer.events if e.event == "completion.delta")
    assert text == "np.zeros(3)"  # cut at the blank stretch, the held-back newlines dropped
    done = answer.events[-1].data
    assert done["model"] == "fake-coder" and done["usage"]["completion_tokens"] == 5
    assert fake.requests[0].body["stream"] is True


async def test_stream_of_a_chat_style_answer_is_one_delta_then_done(
    server: Server, gateway: Any, fakes: list[FakeOpenAI]
) -> None:
    await provider(gateway, fakes, chat("np"))
    gateway.config.completion_style = "chat"
    answer = await server.stream(URL, {"prefix": "import numpy as ", "stream": True})
    assert [e.event for e in answer.events] == ["completion.delta", "completion.done"]
    assert answer.events[0].data == {"text": "np"}


async def test_a_magic_line_is_left_alone(
    server: Server, gateway: Any, fakes: list[FakeOpenAI]
) -> None:
    fake = await provider(gateway, fakes, completions("never"))
    for prefix in ("x = 1\n%resolve plot it", "%%time", "  !pip ins"):
        response = await server.post(URL, {"prefix": prefix, "suffix": ""})
        assert response.status_code == 200
        assert response.json()["items"] == []
    assert fake.requests == []


async def test_the_model_lock_refuses_a_model_not_allowed(
    server: Server, gateway: Any, fakes: list[FakeOpenAI]
) -> None:
    fake = await provider(gateway, fakes, completions("x"))
    gateway.config.allowed_models = ["fake-coder"]
    response = await server.post(URL, {"prefix": "a = ", "model": "gpt-4o"})
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "model_not_allowed"
    gateway.config.completion_model = "not-listed"
    response = await server.post(URL, {"prefix": "a = "})
    assert response.json()["error"]["code"] == "model_not_allowed"
    assert fake.requests == []


async def test_bounds_keep_the_end_of_the_prefix_and_the_start_of_the_suffix(
    server: Server, gateway: Any, fakes: list[FakeOpenAI]
) -> None:
    fake = await provider(gateway, fakes, completions("1"))
    gateway.config.completion_style = "suffix"
    gateway.config.completion_max_prefix = 8
    gateway.config.completion_max_suffix = 5
    await server.post(URL, {"prefix": "0123456789abcdef", "suffix": "ABCDEFGHIJ"})
    assert fake.requests[0].body["prompt"] == "89abcdef"
    assert fake.requests[0].body["suffix"] == "ABCDE"


async def test_a_newer_request_for_the_same_cell_cancels_the_older(
    server: Server, gateway: Any, fakes: list[FakeOpenAI]
) -> None:
    def hang_first(request: Request) -> Reply:
        if len(fake.requests) == 1:
            return Reply(hang=True)
        return completions("newer")(request)

    fake = await provider(gateway, fakes, hang_first)
    gateway.config.completion_style = "suffix"
    body = {"prefix": "a = ", "cell_id": "cell-1"}
    person = Person(server)
    await person.usage()  # the login cookie first: both requests are then the same person's
    older = asyncio.ensure_future(person.post(body))
    while not fake.requests:
        await asyncio.sleep(0.02)
    newer = await person.post({**body, "prefix": "a = b"})
    assert newer.json()["items"] == [{"insertText": "newer"}]
    stale = await older
    assert stale.status_code == 409
    assert stale.json()["error"]["code"] == "cancelled"
    usage = await person.usage()
    assert usage["cancelled"] == 1 and usage["requests"] == 1


async def test_the_scripted_provider_completes_deterministically(server: Server) -> None:
    response = await server.post(URL, {"prefix": "x = 1\nimport "})
    assert response.json()["items"] == [{"insertText": "numpy as np"}]
    assert response.json()["model"] == "scripted"


@pytest.mark.parametrize(
    "body",
    [{}, {"prefix": 3}, {"prefix": "a", "extra": 1}, {"prefix": "a", "cell_id": "x" * 300}],
)
async def test_bad_bodies_are_400(server: Server, body: dict[str, Any]) -> None:
    response = await server.post(URL, json.loads(json.dumps(body)))
    assert response.status_code == 400


async def test_a_client_going_away_aborts_its_provider_request(
    server: Server, gateway: Any, fakes: list[FakeOpenAI]
) -> None:
    fake = await provider(gateway, fakes, lambda _: Reply(hang=True))
    gateway.config.completion_style = "suffix"
    person = Person(server)
    await person.usage()
    request = asyncio.ensure_future(person.post({"prefix": "a = ", "cell_id": "cell-2"}))
    while not fake.requests:
        await asyncio.sleep(0.02)
    request.cancel()  # the client closes its connection
    await asyncio.gather(request, return_exceptions=True)
    while (await person.usage())["cancelled"] == 0:
        await asyncio.sleep(0.02)
    assert (await person.usage())["requests"] == 0


async def test_the_cancelled_request_closes_its_provider_connection(
    server: Server, gateway: Any
) -> None:
    """A provider that never answers the first request: the gateway's connection to it ends
    (EOF) when a newer request for the cell replaces it."""
    closed = asyncio.Event()
    received: list[bytes] = []

    async def never_answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        received.append(await reader.readuntil(b"\r\n\r\n"))
        if len(received) == 1:
            await reader.read()  # b"" once the gateway closes the connection
            closed.set()
        writer.close()

    listener = await asyncio.start_server(never_answer, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    base = f"http://127.0.0.1:{port}/v1"
    gateway.provider = OpenAIProvider(base, "sk-test", "chat-model", max_retries=0)
    gateway.config.completion_model = "fake-coder"
    person = Person(server)
    await person.usage()
    older = asyncio.ensure_future(person.post({"prefix": "a = ", "cell_id": "c-9"}))
    while not received:
        await asyncio.sleep(0.02)
    await person.post({"prefix": "a = b", "cell_id": "c-9"})  # its provider closes at once
    await closed.wait()
    assert (await older).json()["error"]["code"] == "cancelled"
    listener.close()


async def test_anthropic_completes_in_the_chat_style_with_its_key(
    server: Server, gateway: Any, jp_asyncio_loop: Any
) -> None:
    """The fake refuses what the real Messages API refuses, so the request is one it takes."""
    answer = {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": "```python\nnumpy as np\n```"}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 40, "output_tokens": 6},
    }
    fake = FakeAnthropic(reply_to=lambda _: json_reply(200, answer))
    await fake.start()
    try:
        gateway.provider = AnthropicProvider(
            base_url=fake.base_url, api_key="sk-ant-test", model="claude-sonnet-4-5"
        )
        gateway.config.completion_model = "claude-sonnet-4-5"
        person = Person(server)
        response = await person.post({"prefix": "import ", "suffix": ""})
        assert response.status_code == 200, response.text
        assert response.json()["items"] == [{"insertText": "numpy as np"}]
        assert fake.refusals == []
        sent = fake.requests[0]
        assert sent.path == "/v1/messages"
        assert sent.headers["x-api-key"] == "sk-ant-test"
        assert sent.body["model"] == "claude-sonnet-4-5"
        assert "import <CURSOR>" in sent.body["messages"][0]["content"]
        assert (await person.usage())["completion_tokens"] == 6
    finally:
        await fake.stop()
