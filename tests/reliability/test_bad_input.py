"""Property-based bad input: the pure modules never raise on garbage, and no public or internal
endpoint answers 5xx or dies on it (issue 10; deep JSON, NUL and over-long paths: issue 14)."""

from __future__ import annotations

import json
from typing import Any

import httpx
from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_resolve.contracts import safejson
from jupyter_resolve.contracts.frames import FrameTranslator
from jupyter_resolve.contracts.sse import data_payload
from jupyter_resolve.providers.wire_names import chunk_from_wire, request_to_wire
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


def nest(value: Any, depth: int, kind: str) -> Any:
    for _ in range(depth):
        value = [value] if kind == "list" else {"k": value}
    return value


def deep_text(depth: int, kind: str) -> str:
    """JSON nested ``depth`` deep, built as text (json.dumps would recurse itself)."""
    opener, closer = ("[", "]") if kind == "list" else ('{"k":', "}")
    return opener * depth + "1" + closer * depth


DEEP = st.builds(
    deep_text,
    st.integers(min_value=safejson.MAX_DEPTH + 1, max_value=50_000),
    st.sampled_from(["list", "dict"]),
)
# Paths a file system cannot take: NUL and other control characters, names over NAME_MAX,
# paths over PATH_MAX.
BAD_PATH = (
    st.builds(
        lambda a, c, b: a + c + b,
        st.text(max_size=10),
        st.sampled_from(["\x00", "\n", "\r", "\x1b", "\x7f"]),
        st.text(max_size=10),
    )
    | st.integers(min_value=256, max_value=5000).map(lambda n: "n" * n)
    | st.integers(min_value=2049, max_value=3000).map(lambda n: "d/" * n)
)
NEAR_PROMOTE = st.fixed_dictionaries(
    {},
    optional={
        "file": BAD_PATH | JSON,
        "notebook": BAD_PATH | JSON,
        "cell_id": JSON,
        "output_index": JSON,
        "session_id": BAD_PATH | st.sampled_from([".", "..", "s-1"]) | JSON,
        "path": BAD_PATH | JSON,
        "bundle": st.dictionaries(st.text(max_size=30) | BAD_PATH, JSON, max_size=3) | JSON,
        "media_type": st.text(max_size=40) | BAD_PATH | JSON,
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


def depth_of(value: Any) -> int:
    if isinstance(value, list | dict):
        children = value.values() if isinstance(value, dict) else value
        return 1 + max((depth_of(c) for c in children), default=0)
    return 0


@FAST
@given(st.text() | st.binary() | JSON.map(json.dumps) | DEEP)
def test_bounded_json_loader_raises_only_value_errors(payload: str | bytes) -> None:
    try:
        value = safejson.loads(payload)
    except ValueError:
        return
    assert json.dumps(value) == json.dumps(json.loads(payload))


@FAST
@given(JSON, st.integers(min_value=0, max_value=80), st.sampled_from(["list", "dict"]))
def test_bounded_json_loader_measures_depth_exactly(inner: Any, depth: int, kind: str) -> None:
    value = nest(inner, depth, kind)
    text = json.dumps(value)
    assert safejson.nesting_depth(text) == depth_of(value)
    if depth_of(value) <= safejson.MAX_DEPTH:
        assert safejson.loads(text) == value
    else:
        try:
            safejson.loads(text)
        except safejson.TooDeep:
            pass
        else:
            raise AssertionError(f"depth {depth_of(value)} was let through")


def collect(strategy: st.SearchStrategy[Any], how: settings) -> list[Any]:
    values: list[Any] = []

    @how
    @given(strategy)
    def gather(value: Any) -> None:
        values.append(value)

    gather()
    return values


async def test_public_endpoints_answer_garbage_with_4xx(server: Server) -> None:
    bodies: list[Any] = collect(NEAR_CHAT | NEAR_PROMOTE | JSON, SLOW)
    deep = collect(DEEP, settings(max_examples=10, deadline=None, database=None))
    async with server.client() as client:
        for path in (
            "/resolve/api/chat",
            "/resolve/api/tasks",
            "/resolve/api/artifacts",
            "/resolve/v1/chat/completions",
            "/resolve/api/runs/run-x/approvals/c1",
        ):
            for body in deep:
                response = await client.post(path, content=body, headers=server.auth)
                assert response.status_code == 400, (path, body[:200], response.text)
            for body in (json.dumps(b) for b in bodies):
                response = await client.post(path, content=body, headers=server.auth)
                assert response.status_code < 500, (path, body[:200], response.text)
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

    from jupyter_resolve.runtime.handlers import InternalHandler

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
        handler = InternalHandler(Application(), request, host=gateway)
        try:
            handler.prepare()
        except HTTPError as exc:
            assert exc.status_code == status, peer
        else:
            raise AssertionError(f"{peer} with {token} was let in")
