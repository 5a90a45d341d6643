"""A context a prefix cache can reuse (issue 34.3, DESIGN 10.6): how much of what a long
session sends a provider's prefix cache (Anthropic's, OpenAI's, llama.cpp's) could reuse.

A real server and runtime, ``c.Resolve.context_tokens`` = 8,000, provider ``openai`` at a fake
that records every request (in this process, :class:`tests.fakes.openai_server.FakeOpenAI`
answering as :class:`tests.fakes.python_session.PythonSession`): one session of 40 turns, each
a python call whose output is 3,000 characters, then a short answer (two prompts a turn;
summarization requests are not counted). A prompt is what a cache keys on: the tools' JSON, then
each message's JSON, in order.

- ``prefix_reuse_40_turns``: the share of all prompt characters sent that a cache holding the
  last 8 prompts could reuse (each prompt's longest common prefix with any of those 8);
- ``prefix_breaks_40_turns``: the prompts that do not extend the one before (their common
  prefix ends before the previous prompt's end).
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import httpx

from jupyter_resolve.contracts.compaction import is_summary_request
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.python_session import PythonSession

from .core import BenchError, Context, Figure, Goal

TURNS = 40
OUTPUT_CHARS = 3_000
CONTEXT_TOKENS = 8_000
CACHED_PROMPTS = 8


def rendered(body: dict[str, Any]) -> str:
    """A prompt as a prefix cache sees it: the tools, then each message, in order."""
    parts = [json.dumps(body.get("tools") or [], sort_keys=True)]
    parts += [json.dumps(m, sort_keys=True) for m in body.get("messages") or []]
    return "\n".join(parts)


@contextmanager
def recording_fake() -> Iterator[FakeOpenAI]:
    """The fake on a loop of its own, in a thread (the bench is synchronous)."""
    loop = asyncio.new_event_loop()
    fake = FakeOpenAI("text", reply_to=PythonSession(OUTPUT_CHARS))
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        asyncio.run_coroutine_threadsafe(fake.start(), loop).result(10)
        yield fake
    finally:
        asyncio.run_coroutine_threadsafe(fake.stop(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)


def common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    low, high = 0, n  # a[:low] == b[:low], a[:high] != b[:high]
    while high - low > 1:
        middle = (low + high) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle
    return low


def prefix_figures(prompts: Sequence[str], cached: int = CACHED_PROMPTS) -> tuple[float, int]:
    """The share of characters a cache of the last ``cached`` prompts reuses, and the prompts
    that do not extend the one before."""
    reused = breaks = 0
    for i, prompt in enumerate(prompts):
        earlier = prompts[max(0, i - cached) : i]
        reused += max((common_prefix(prompt, p) for p in earlier), default=0)
        if i and common_prefix(prompt, prompts[i - 1]) < len(prompts[i - 1]):
            breaks += 1
    total = sum(len(p) for p in prompts)
    return (reused / total if total else 0.0), breaks


def session_prompts(ctx: Context) -> list[str]:
    """Run the 40-turn session; the prompts the fake received, rendered."""
    from .servers import JupyterServer

    with recording_fake() as fake:
        args = (f"--Resolve.context_tokens={CONTEXT_TOKENS}", "--Resolve.sandbox=none")
        with JupyterServer(ctx.repo, fake.base_url, extra_args=args) as srv:
            for turn in range(TURNS):
                body = {
                    "messages": [{"role": "user", "content": f"Turn {turn}: run the next step."}],
                    "session_id": "s-prefix",
                }
                with httpx.stream(
                    "POST",
                    f"{srv.url}/resolve/api/chat",
                    json=body,
                    headers=srv.headers,
                    timeout=120,
                ) as reply:
                    text = "".join(reply.iter_text())
                if '"reason": "stop"' not in text and '"reason":"stop"' not in text:
                    raise BenchError(f"turn {turn} did not end with an answer: {text[-400:]}")
        bodies = [r.body for r in fake.requests if r.path.endswith("/chat/completions")]
    return [rendered(b) for b in bodies if isinstance(b, dict) and not is_summary_request(b)]


def prefix_cache(ctx: Context) -> list[Figure]:
    prompts = session_prompts(ctx)
    if len(prompts) < 2 * TURNS:
        raise BenchError(f"{len(prompts)} prompts for {TURNS} turns: the session fell short")
    reuse, breaks = prefix_figures(prompts)
    ctx.log(f"prefix cache: {len(prompts)} prompts, {reuse:.1%} reusable, {breaks} breaks")
    return [
        Figure("prefix_reuse_40_turns", reuse * 100, "%", Goal(90.0, ">=")),
        Figure("prefix_breaks_40_turns", float(breaks), "prompts", Goal(8.0)),
    ]
