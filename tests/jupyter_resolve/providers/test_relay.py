"""The OpenAI relay: plain events go on as the provider's bytes, the rest the slow way."""

from __future__ import annotations

import json
import random
import re

import pytest

from jupyter_resolve.contracts.sse import SSEEvent
from jupyter_resolve.providers.relay import MAX_EVENT, EventTooLarge, SSERelay, needs_gateway


def event(obj: object) -> bytes:
    return b"data: " + json.dumps(obj).encode() + b"\n\n"


def content(text: str) -> bytes:
    return event({"choices": [{"index": 0, "delta": {"content": text}}], "usage": None})


def test_plain_content_goes_on_untouched_in_one_piece() -> None:
    relay = SSERelay()
    stream = content("Hel") + content("lo") + content(" there")
    assert relay.feed(stream) == [stream]
    assert relay.close() == []


def test_a_partial_event_waits_for_its_end() -> None:
    relay = SSERelay()
    stream = content("Hel") + content("lo")
    cut = len(content("Hel")) + 7
    assert relay.feed(stream[:cut]) == [content("Hel")]
    assert relay.feed(stream[cut:]) == [content("lo")]


def test_what_the_gateway_needs_comes_out_as_events_in_order() -> None:
    call = {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "c1"}]}}]}
    usage = {"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 2}}
    stream = (
        content("a")
        + event(call)
        + content("b")
        + event(usage)
        + event({"error": {"message": "boom"}})
        + b"data: [DONE]\n\n"
    )
    items = SSERelay().feed(stream)
    assert items[0] == content("a")
    assert isinstance(items[1], SSEEvent) and json.loads(items[1].data) == call
    assert items[2] == content("b")
    assert isinstance(items[3], SSEEvent) and json.loads(items[3].data) == usage
    assert isinstance(items[4], SSEEvent) and "boom" in items[4].data
    assert isinstance(items[5], SSEEvent) and items[5].data == "[DONE]"


def test_other_shapes_are_decoded_not_forwarded() -> None:
    stream = (
        b": keep-alive\n\n"
        + b'event: error\ndata: {"message": "overloaded"}\n\n'
        + content("x").replace(b"\n\n", b"\r\n\r\n")
    )
    items = SSERelay().feed(stream)
    assert all(isinstance(item, SSEEvent) for item in items)
    assert [(i.event, json.loads(i.data)) for i in items if isinstance(i, SSEEvent)] == [
        ("error", {"message": "overloaded"}),
        ("", json.loads(content("x")[6:])),
    ]


def test_an_unfinished_last_event_is_read_at_close() -> None:
    relay = SSERelay()
    assert relay.feed(b'data: {"choices": []}') == []
    items = relay.close()
    assert len(items) == 1 and isinstance(items[0], SSEEvent)
    assert json.loads(items[0].data) == {"choices": []}


def test_an_event_that_never_ends_is_refused_not_kept() -> None:
    relay = SSERelay()
    relay.feed(b'data: {"choices": [{"delta": {"content": "')
    with pytest.raises(EventTooLarge):
        for _ in range(MAX_EVENT // (1 << 20) + 2):
            relay.feed(b"x" * (1 << 20))


# The relay's check as one regex, before it became substring searches (slower, same answers)
ONE_REGEX = re.compile(
    rb'"(?:tool_calls|error|thinking_blocks)"|"usage"\s*:\s*\{|\[DONE\]|\n(?!\n|data: \{)'
)
PIECES = [
    content("plain"),
    content('a "quoted" word, "error" in text, [DONE] as text'),
    event({"choices": [], "usage": {"prompt_tokens": 1}}),
    b'data: {"usage" :\n {"x": 1}}\n\n',
    b'data: {"usage"  :  null}\n\n',
    event({"error": {"message": "boom"}}),
    event({"choices": [{"delta": {"tool_calls": []}}]}),
    event({"thinking_blocks": []}),
    b"data: [DONE]\n\n",
    b": keep-alive\n\n",
    b"event: error\ndata: {}\n\n",
    b'data: {"a": 1}\ndata: {"b": 2}\n\n',
    b"\n",
    b'"usage"',
    b"{",
]


def test_the_check_answers_as_the_single_regex_did() -> None:
    rng = random.Random(21)
    for _ in range(3000):
        data = b"".join(rng.choice(PIECES) for _ in range(rng.randint(1, 6)))
        end = rng.choice([len(data), max(data.rfind(b"\n\n"), 0)])
        assert needs_gateway(data, end) == (ONE_REGEX.search(data, 0, end) is not None), data
