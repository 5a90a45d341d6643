"""JSON-RPC parsing and the message mapping (pure parts)."""

from __future__ import annotations

import json

import pytest

from jupyter_resolve.peer.jsonrpc import (
    CONTENT_TYPE_NOT_SUPPORTED,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    UNSUPPORTED_OPERATION,
    RpcError,
    message_text,
    parse_call,
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
        ({"message": {"taskId": "job-1", "parts": [{"text": "more"}]}}, UNSUPPORTED_OPERATION),
    ],
)
def test_bad_messages(params: dict[str, object], code: int) -> None:
    with pytest.raises(RpcError) as info:
        message_text(params)
    assert info.value.code == code


def test_task_id_by_id_or_name() -> None:
    assert task_id({"id": "job-1"}) == "job-1"
    assert task_id({"name": "tasks/job-2"}) == "job-2"
    with pytest.raises(RpcError):
        task_id({})
