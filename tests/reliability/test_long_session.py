"""A long session (issue 16): 200 turns, each a python call printing 5,000 characters, in one
session, through a real server, runtime and kernel, with a provider that checks what it gets.

Every request stays inside ``context_tokens`` (measured by the provider, as a real one would),
keeps every call with its result, and still carries the newest turn; compaction elides old
outputs, then summarizes the oldest turns with the model (``context.compacted``); each run's
log replays byte for byte what was streamed live.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from jupyter_resolve.contracts.compaction import SUMMARY_MARKER
from jupyter_resolve.providers import OpenAIProvider
from tests.conftest import Server, parse_sse_block
from tests.fakes._server import Reply, Request
from tests.fakes.openai_server import DONE, FakeOpenAI, chunk, sse, stream, usage

TURNS = 200
OUTPUT_CHARS = 5_000
WINDOW = 8_192


def measured_tokens(body: dict[str, Any]) -> int:
    """What the fake provider counts a request as, the way providers count (not as the gateway
    estimates: denser, 3.5 characters a token, so its calibration has work to do): a few tokens
    a message, its text, its calls' names and arguments, and the tools' schemas."""
    chars = len(json.dumps(body.get("tools") or []))
    tokens = 0
    for m in body.get("messages") or ():
        tokens += 4
        chars += len(str(m.get("content") or ""))
        for call in m.get("tool_calls") or ():
            tokens += 8
            chars += len(call["function"]["name"]) + len(call["function"]["arguments"])
    return tokens + int(chars / 3.5)


def reply_text(text: str, prompt_tokens: int) -> Reply:
    return stream(
        [
            sse(chunk({"role": "assistant", "content": text})),
            sse(chunk({}, "stop")),
            sse(usage(prompt_tokens, len(text) // 4)),
            DONE,
        ]
    )


def reply_call(turn: int, prompt_tokens: int) -> Reply:
    code = f"print('turn {turn} ' + 'x' * {OUTPUT_CHARS})"
    call = {
        "index": 0,
        "id": f"call_t{turn}",
        "type": "function",
        "function": {"name": "python", "arguments": json.dumps({"code": code})},
    }
    return stream(
        [
            sse(chunk({"role": "assistant", "content": ""})),
            sse(chunk({"tool_calls": [call]})),
            sse(chunk({}, "tool_calls")),
            sse(usage(prompt_tokens, 20)),
            DONE,
        ]
    )


class CheckingModel:
    """Answers like a model (a call, then a line), and notes what breaks the rules."""

    def __init__(self) -> None:
        self.problems: list[str] = []
        self.summaries = 0
        self.largest = 0

    def __call__(self, request: Request) -> Reply:
        body = request.body
        messages = body["messages"]
        tokens = measured_tokens(body)
        if messages[0]["content"].startswith(SUMMARY_MARKER):
            self.summaries += 1
            return reply_text(f"Summary {self.summaries}: turns so far printed x's.", tokens)
        self.largest = max(self.largest, tokens)
        if tokens > WINDOW:
            last = messages[-1]["role"]
            self.problems.append(f"{tokens} tokens > {WINDOW} ({len(messages)} messages, {last})")
        self.check_pairs(messages)
        last = messages[-1]
        if last["role"] == "user":
            turn = int(last["content"].split()[1].rstrip(":"))
            return reply_call(turn, tokens)
        return reply_text(f"Done with {last['tool_call_id']}.", tokens)

    def check_pairs(self, messages: list[dict[str, Any]]) -> None:
        open_calls: set[str] = set()
        for m in messages:
            if m["role"] == "assistant":
                if open_calls:
                    self.problems.append(f"calls without results: {open_calls}")
                open_calls = {c["id"] for c in m.get("tool_calls") or ()}
            elif m["role"] == "tool":
                if m["tool_call_id"] not in open_calls:
                    self.problems.append(f"a result without its call: {m['tool_call_id']}")
                open_calls.discard(m["tool_call_id"])
            elif open_calls:
                self.problems.append(f"calls without results: {open_calls}")
                open_calls = set()


@pytest.fixture
def model(gateway: Any, jp_asyncio_loop: Any) -> Iterator[CheckingModel]:
    checking = CheckingModel()
    fake = FakeOpenAI(reply_to=checking)
    jp_asyncio_loop.run_until_complete(fake.start())
    gateway.provider = OpenAIProvider(
        fake.base_url, "sk-test", "fake-model", max_retries=0, timeout=30
    )
    gateway.config.context_tokens = WINDOW
    yield checking
    gateway.config.context_tokens = 0
    jp_asyncio_loop.run_until_complete(fake.stop())


def frames(raw: str) -> str:
    """The SSE text without keep-alive comments (they depend on timing, not on the run)."""
    blocks = [b for b in raw.split("\n\n") if b and not b.startswith(":")]
    return "\n\n".join(blocks)


async def test_a_200_turn_session_stays_in_its_window(
    server: Server, gateway: Any, model: CheckingModel
) -> None:
    compacted: list[dict[str, Any]] = []
    async with httpx.AsyncClient(base_url=server.base, timeout=60, trust_env=False) as client:
        for turn in range(1, TURNS + 1):
            body = {"messages": [{"role": "user", "content": f"turn {turn}: print"}]}
            body["session_id"] = "s-long"
            live = await client.post("/resolve/api/chat", json=body, headers=server.auth)
            assert live.status_code == 200
            blocks = [parse_sse_block(b) for b in frames(live.text).split("\n\n")]
            events = [e for e in blocks if e is not None]
            run_id = events[0].data["run_id"]
            compacted += [e.data for e in events if e.event == "context.compacted"]
            assert events[-1].event == "run.completed", events[-1]
            assert events[-1].data["reason"] == "stop", events[-1]
            text = "".join(e.data["text"] for e in events if e.event == "text.delta")
            assert text == f"Done with call_t{turn}."
            replay = await client.get(f"/resolve/api/runs/{run_id}/events", headers=server.auth)
            assert frames(replay.text) == frames(live.text), f"turn {turn}"
    assert not model.problems, model.problems[:5]
    assert model.summaries >= 1 and any(c.get("summarized_runs") for c in compacted)
    assert all(c["after_tokens"] < c["before_tokens"] for c in compacted)
    transcript = (await server.get("/resolve/api/sessions/s-long/transcript")).json()
    assert transcript["messages"][0]["content"].startswith("[Summary of the")
    assert transcript["messages"][-1]["content"] == "Done with call_t200."
