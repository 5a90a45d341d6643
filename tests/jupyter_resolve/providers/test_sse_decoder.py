"""The incremental SSE decoder, fed every split of its input."""

from __future__ import annotations

import pytest

from jupyter_resolve.contracts.sse import SSEDecoder, SSEEvent, parse_data

STREAM = (
    ": comment\r\n\r\n"
    'event: message\nid: 7\ndata: {"a": "é🎉"}\n\n'
    'data:{"b": 1}\r\n\r\n'
    "data: line1\ndata: line2\n\n"
    "retry: 10\n\n"
    "data: [DONE]"
).encode()
EXPECTED = [
    SSEEvent("message", '{"a": "é🎉"}'),
    SSEEvent("", '{"b": 1}'),
    SSEEvent("", "line1\nline2"),
    SSEEvent("", "[DONE]"),
]


def decode(pieces: list[bytes]) -> list[SSEEvent]:
    decoder = SSEDecoder()
    events = [e for piece in pieces for e in decoder.feed(piece)]
    return events + decoder.close()


@pytest.mark.parametrize("at", range(len(STREAM) + 1))
def test_every_two_way_split(at: int) -> None:
    assert decode([STREAM[:at], STREAM[at:]]) == EXPECTED


def test_byte_at_a_time() -> None:
    assert decode([STREAM[i : i + 1] for i in range(len(STREAM))]) == EXPECTED


def test_done_without_blank_line_is_dispatched_at_once() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: [DONE]\n") == [SSEEvent("", "[DONE]")]


def test_parse_data_single_newline_separated_objects() -> None:
    assert parse_data('{"a": 1}\n{"b": 2}') == [{"a": 1}, {"b": 2}]
    assert parse_data("  ") == []
    with pytest.raises(ValueError):
        parse_data("not json")
