"""The official `openai` client talks to the agent through /resolve/v1."""

from __future__ import annotations

import openai

from tests.conftest import Server


def client(server: Server) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(
        base_url=f"{server.base}/resolve/v1", api_key=server.token, max_retries=0
    )


async def test_non_streaming_completion(server: Server) -> None:
    async with client(server) as oa:
        completion = await oa.chat.completions.create(
            model="resolve", messages=[{"role": "user", "content": "hi"}]
        )
    text = completion.choices[0].message.content or ""
    assert "scripted" in text
    assert completion.choices[0].finish_reason == "stop"
    assert completion.id.startswith("chatcmpl-run-")


async def test_streaming_completion_with_usage(server: Server) -> None:
    pieces: list[str] = []
    usage = None
    async with client(server) as oa:
        stream = await oa.chat.completions.create(
            model="resolve",
            messages=[{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}],
            stream=True,
            stream_options={"include_usage": True},
        )
        async for chunk in stream:
            if chunk.usage is not None:
                usage = chunk.usage
            for choice in chunk.choices:
                pieces.append(choice.delta.content or "")
    assert "scripted" in "".join(pieces)
    assert usage is not None and usage.completion_tokens > 0


async def test_wrong_key_is_refused(server: Server) -> None:
    bad = openai.AsyncOpenAI(base_url=f"{server.base}/resolve/v1", api_key="nope", max_retries=0)
    async with bad:
        try:
            await bad.chat.completions.create(
                model="resolve", messages=[{"role": "user", "content": "hi"}]
            )
        except openai.PermissionDeniedError:
            return
    raise AssertionError("a wrong key was accepted")
