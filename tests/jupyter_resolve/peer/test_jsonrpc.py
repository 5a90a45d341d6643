"""JSON-RPC parsing and the message mapping (pure parts)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_resolve.peer.jsonrpc import (
    CONTENT_TYPE_NOT_SUPPORTED,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    RpcError,
    http_status,
    message_task,
    message_text,
    parse_call,
    refuse,
    request_id,
    task_id,
)


def raw(**body: object) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 7, **body}).encode()


def test_v1_and_v03_names_map_to_the_same_operations() -> None:
    pairs = [
        ("SendMessage", "message/send"),
        ("GetTask", "tasks/get"),
        ("CancelTask", "tasks/cancel"),
    ]
    for new, old in pairs:
        a, b = parse_call(raw(method=new, params={})), parse_call(raw(method=old, params={}))
        assert a.op == b.op and (a.version, b.version) == ("1.0", "0.3") and a.id == 7


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"{nope", PARSE_ERROR),
        (b"[]", INVALID_REQUEST),
        (json.dumps({"id": 1, "method": "GetTask"}).encode(), INVALID_REQUEST),
        (raw(method="tasks/delete"), METHOD_NOT_FOUND),
        (raw(method="GetTask", params=[1]), INVALID_PARAMS),
    ],
)
def test_invalid_requests(body: bytes, code: int) -> None:
    with pytest.raises(RpcError) as info:
        parse_call(body)
    assert info.value.code == code


def test_message_text_from_v1_and_v03_parts() -> None:
    v1 = {"message": {"role": "ROLE_USER", "parts": [{"text": "a"}, {"text": "b"}]}}
    assert message_text(v1) == ("a\n\nb", None)
    v03 = {
        "message": {"role": "user", "parts": [{"kind": "text", "text": "q"}]},
        "metadata": {"soul": "planner"},
    }
    assert message_text(v03) == ("q", "planner")


@pytest.mark.parametrize(
    ("params", "code"),
    [
        ({}, INVALID_PARAMS),
        ({"message": {"parts": []}}, INVALID_PARAMS),
        ({"message": {"parts": [{"text": "  "}]}}, INVALID_PARAMS),
        ({"message": {"parts": [{"url": "https://x"}]}}, CONTENT_TYPE_NOT_SUPPORTED),
    ],
)
def test_bad_messages(params: dict[str, object], code: int) -> None:
    with pytest.raises(RpcError) as info:
        message_text(params)
    assert info.value.code == code


def test_a_message_naming_a_task_continues_it() -> None:
    text = {"parts": [{"text": "more"}]}
    assert message_task({"message": {**text, "taskId": "job-1"}}) == "job-1"
    assert message_task({"message": text}) is None
    assert message_task({"message": {**text, "taskId": ""}}) is None
    with pytest.raises(RpcError) as info:
        message_task({"message": {**text, "taskId": "../runs/x"}})
    assert info.value.code == INVALID_PARAMS


def test_task_id_by_id_or_name() -> None:
    assert task_id({"id": "job-1"}) == "job-1"
    assert task_id({"name": "tasks/job-2"}) == "job-2"
    with pytest.raises(RpcError):
        task_id({})


@pytest.mark.parametrize(
    "value",
    ["j" * 300, "../runs/x", ".hidden", "a/b", "a\nb", "job-1\n", "", 5, ["job-1"], {"id": 1}],
)
def test_a_task_id_is_an_id_or_invalid_params(value: object) -> None:
    with pytest.raises(RpcError) as info:
        task_id({"id": value})
    assert info.value.code == INVALID_PARAMS
    assert len(info.value.message) < 300  # the message never echoes a huge id whole


def test_a_soul_name_is_an_id() -> None:
    message = {"parts": [{"text": "x"}], "metadata": {"soul": "s" * 300}}
    with pytest.raises(RpcError) as info:
        message_text({"message": message})
    assert info.value.code == INVALID_PARAMS


@pytest.mark.parametrize("depth", [65, 1000, 100_000])
def test_deeply_nested_json_is_a_parse_error(depth: int) -> None:
    body = b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"x": '
    body += b"[" * depth + b"]" * depth + b"}}"
    with pytest.raises(RpcError) as info:
        parse_call(body)
    assert info.value.code == PARSE_ERROR and "nested deeper" in info.value.message
    # the id is not read back out of a body that did not parse
    assert request_id(body) is None


def test_parse_errors_are_http_400_other_errors_200() -> None:
    assert http_status(refuse(b"[" * 5000, RpcError(PARSE_ERROR, "x"))) == 400
    assert http_status(refuse(b"{}", RpcError(INVALID_REQUEST, "x"))) == 200


@settings(max_examples=200, deadline=None, database=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
        max_leaves=50,
    )
    | st.text().map(lambda t: {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": t}})
)
def test_any_body_parses_or_is_an_rpc_error(value: object) -> None:
    raw = json.dumps(value).encode()
    try:
        call = parse_call(raw)
    except RpcError:
        return
    try:
        task_id(call.params)
    except RpcError as exc:
        assert exc.code == INVALID_PARAMS


def test_streaming_listing_and_subscribing_have_both_names() -> None:
    pairs = [
        ("SendStreamingMessage", "message/stream", "stream"),
        ("SubscribeToTask", "tasks/resubscribe", "subscribe"),
        ("ListTasks", "tasks/list", "list"),
    ]
    for new, old, op in pairs:
        a, b = parse_call(raw(method=new, params={})), parse_call(raw(method=old, params={}))
        assert a.op == b.op == op and (a.version, b.version) == ("1.0", "0.3")
