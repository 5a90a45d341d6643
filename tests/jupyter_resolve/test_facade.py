"""The official `openai` client talks to the agent through /resolve/v1."""

from __future__ import annotations

from typing import Any

import openai
import pytest

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


async def test_models_are_the_agent_and_its_souls(server: Server, gateway: Any) -> None:
    async with client(server) as oa:
        listed = [m.id async for m in oa.models.list()]
        one = await oa.models.retrieve("resolve")
        soul = await oa.models.retrieve("resolve/planner")
        with pytest.raises(openai.NotFoundError) as missing:
            await oa.models.retrieve("resolve/nobody")
    assert listed[0] == "resolve"
    assert set(listed[1:]) == {f"resolve/{name}" for name in gateway.souls}
    assert "resolve/planner" in listed
    assert one.id == "resolve" and one.object == "model" and one.owned_by == "jupyter-resolve"
    assert soul.id == "resolve/planner"
    body = missing.value.body
    assert isinstance(body, dict) and body["code"] == "model_not_found"
    assert "resolve/nobody" in missing.value.message


async def test_a_soul_model_selects_the_soul_and_is_echoed(server: Server, gateway: Any) -> None:
    async with client(server) as oa:
        completion = await oa.chat.completions.with_raw_response.create(
            model="resolve/evaluator", messages=[{"role": "user", "content": "hi"}]
        )
        parsed = completion.parse()
        stream = await oa.chat.completions.create(
            model="resolve/planner", messages=[{"role": "user", "content": "hi"}], stream=True
        )
        models = {chunk.model async for chunk in stream}
        with pytest.raises(openai.NotFoundError):
            await oa.chat.completions.create(
                model="resolve/nobody", messages=[{"role": "user", "content": "hi"}]
            )
    assert parsed.model == "resolve/evaluator"
    run = gateway.runs.get(completion.headers["X-Resolve-Run-Id"])
    assert run.soul == "evaluator"
    assert models == {"resolve/planner"}


async def test_every_v1_error_is_json_in_openais_shape(server: Server) -> None:
    async with client(server) as oa:
        with pytest.raises(openai.NotFoundError) as unknown:
            await oa.embeddings.create(model="resolve", input="hi")
        with pytest.raises(openai.BadRequestError) as bad:
            await oa.chat.completions.create(model="resolve", messages=[])
    assert unknown.value.response.headers["Content-Type"].startswith("application/json")
    assert "/resolve/v1/embeddings" in unknown.value.message
    assert isinstance(bad.value.body, dict) and bad.value.body["type"] == "invalid_request_error"
    async with server.client(headers=server.auth) as http:
        for method, path in [
            ("GET", "/resolve/v1/chat/completions"),  # a known path, a wrong method
            ("GET", "/resolve/v1"),
            ("DELETE", "/resolve/v1/files/x"),
        ]:
            response = await http.request(method, path)
            assert response.status_code in (404, 405), (path, response.status_code)
            error = response.json()["error"]
            assert set(error) == {"message", "type", "param", "code"} and error["message"]
    async with server.client() as anonymous:
        refused = await anonymous.get("/resolve/v1/models")
    assert refused.status_code == 403 and refused.json()["error"]["type"] == "permission_error"


async def test_a_failed_run_is_an_openai_error(server: Server, gateway: Any, tmp_path: Any) -> None:
    from jupyter_resolve.providers import ScriptedProvider

    gateway.provider = ScriptedProvider(tmp_path / "missing.jsonl")  # the provider fails
    async with client(server) as oa:
        with pytest.raises(openai.APIStatusError) as failed:
            await oa.chat.completions.create(
                model="resolve", messages=[{"role": "user", "content": "hi"}]
            )
    assert failed.value.status_code == 502
    body = failed.value.body
    assert isinstance(body, dict) and body["type"] == "run_error" and "param" in body
    assert "missing.jsonl" in failed.value.message
