"""Property-based bad input: the pure modules never raise on garbage, and no public or internal
endpoint answers 5xx or dies on it (issue 10)."""

from __future__ import annotations

import json
from typing import Any

import httpx
from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_resolve.frames import FrameTranslator
from jupyter_resolve.providers.wire_names import chunk_from_wire, request_to_wire
from jupyter_resolve.sse import data_payload
from tests.conftest import Server

SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
JSON = st.recursive(
    SCALARS,
    lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(), c, max_size=4),
    max_leaves=12,
)
ROLES = st.sampled_from(["user", "assistant", "system", "tool", "wizard", "", 5])
MESSAGE = st.dictionaries(
    st.sampled_from(["role", "content", "tool_calls", "name", "x"]),
    ROLES | JSON,
    max_size=4,
)
NEAR_CHAT = st.fixed_dictionaries(
    {"messages": st.lists(MESSAGE, max_size=3) | JSON},
    optional={
        "model": JSON,
        "soul": JSON,
        "session_id": JSON,
        "system": JSON,
        "attachments": JSON,
        "notebook": JSON,
    },
)
FRAME = st.fixed_dictionaries(
    {
        "t": st.sampled_from(
            [
                "run",
                "round",
                "delta",
                "reasoning",
                "tool_call",
                "tool_result",
                "usage",
                "error",
                "done",
                "other",
            ]
        )
        | JSON,
        "d": JSON,
    }
)

SLOW = settings(max_examples=60, deadline=None, database=None)
FAST = settings(max_examples=300, deadline=None, database=None)


@FAST
@given(st.text() | FRAME.map(json.dumps) | JSON.map(json.dumps))
def test_frame_translation_never_raises(payload: str) -> None:
    translator = FrameTranslator(budget=8)
    for event_type, data in translator.translate_payload(payload):
        assert isinstance(event_type, str) and isinstance(data, dict)
    assert translator.abort("x", "y") == [] or translator.completed


@FAST
@given(JSON, JSON)
def test_wire_names_never_raise(body: Any, chunk: Any) -> None:
    if isinstance(body, dict):
        _, back = request_to_wire(body)
        if isinstance(chunk, dict):
            chunk_from_wire(chunk, back)
    data_payload(str(body))


def collect(strategy: st.SearchStrategy[Any], how: settings) -> list[Any]:
    values: list[Any] = []

    @how
    @given(strategy)
    def gather(value: Any) -> None:
        values.append(value)

    gather()
    return values


async def test_public_endpoints_answer_garbage_with_4xx(server: Server) -> None:
    bodies = collect(NEAR_CHAT | JSON, SLOW)
    async with server.client() as client:
        for path in (
            "/resolve/api/chat",
            "/resolve/api/tasks",
            "/resolve/v1/chat/completions",
            "/resolve/api/runs/run-x/approvals/c1",
        ):
            for body in bodies:
                response = await client.post(path, content=json.dumps(body), headers=server.auth)
                assert response.status_code < 500, (path, body, response.text)
                if response.status_code >= 400:
                    assert "error" in response.json() or "message" in response.json()
                else:
                    await response.aread()
    assert (await server.get("/resolve/api/health")).json()["runtime"]["state"] == "running"


async def test_internal_endpoints_answer_garbage_with_4xx(gateway: Any, server: Server) -> None:
    await gateway.start()
    base = f"http://127.0.0.1:{gateway.internal_port}/resolve/internal"
    headers = {"Authorization": f"Bearer {gateway.runtime_token}"}
    tool_calls = st.fixed_dictionaries(
        {"run_id": JSON, "call_id": JSON, "name": JSON, "arguments": JSON}
    )
    bodies = collect(tool_calls | JSON, SLOW)
    async with httpx.AsyncClient(trust_env=False, timeout=30) as client:
        for body in bodies:
            for path in ("/tools", "/v1/chat/completions"):
                response = await client.post(base + path, content=json.dumps(body), headers=headers)
                assert response.status_code < 500, (path, body, response.text)


def test_internal_guard_refuses_non_loopback_peers() -> None:
    from unittest.mock import Mock

    from tornado.httputil import HTTPHeaders, HTTPServerRequest
    from tornado.web import Application, HTTPError

    from jupyter_resolve.handlers.internal import InternalHandler

    gateway = Mock(runtime_token="t0k3n")
    for peer, token, status in [
        ("10.1.2.3", "t0k3n", 403),
        ("192.168.0.9", "t0k3n", 403),
        ("127.0.0.1", "wrong", 401),
        ("::1", "wrong", 401),
    ]:
        request = HTTPServerRequest(
            method="POST",
            uri="/resolve/internal/tools",
            headers=HTTPHeaders({"Authorization": f"Bearer {token}"}),
            connection=Mock(),
            body=b"{}",
        )
        request.remote_ip = peer
        handler = InternalHandler(Application(), request, gateway=gateway)
        try:
            handler.prepare()
        except HTTPError as exc:
            assert exc.status_code == status, peer
        else:
            raise AssertionError(f"{peer} with {token} was let in")
