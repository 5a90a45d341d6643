"""CPU per 1,000 chunks: what the chain spends to carry a streamed answer.

Through the chain (client → gateway → agent-httpd → gateway → provider and back) the gateway's
(the ``jupyter server`` process) and the runtime's CPU time, from ``/proc/<pid>/stat``
(utime + stime) before and after a few 2,000-chunk streams, per 1,000 chunks:

- provider ``openai`` pointed at the fake OpenAI server (scenario ``long``);
- provider ``scripted`` replaying one long turn (2,000 content chunks of three words), in a
  server of its own; the gateway makes the chunks itself, so no fake is involved.

Baseline: the fake's own CPU time for serving the same 2,000-chunk stream straight to the
client, per 1,000 chunks. The client's CPU is in none of them.
"""

from __future__ import annotations

import httpx

from .chain import PROMPT, frames, openai_text, resolve_text, timed_stream
from .core import BenchError, Context, Figure, Goal
from .proc import cpu_seconds

SCRIPTED_CHUNKS = 2000
WORDS_PER_CHUNK = 3  # the scripted provider streams content three words a chunk


def long_turn(chunks: int = SCRIPTED_CHUNKS) -> dict[str, object]:
    words = [f"w{i}" for i in range(chunks * WORDS_PER_CHUNK)]
    return {"content": " ".join(words)}


def _per_1000(seconds: float, streams: int, chunks: int) -> float:
    return seconds * 1e3 / (streams * chunks) * 1000


def cpu_per_chunks(ctx: Context) -> list[Figure]:
    fake = ctx.fake()
    server = ctx.server()
    streams = ctx.repeats(3, 10)
    direct_streams = ctx.repeats(10, 30)  # cheap, and the fake's CPU is a few clock ticks each
    timeout = httpx.Timeout(120.0, connect=10.0)
    chat_body = {"messages": [{"role": "user", "content": PROMPT}]}
    direct_body = {
        "model": fake.model,
        "stream": True,
        "messages": [{"role": "user", "content": PROMPT}],
    }
    with httpx.Client(timeout=timeout) as client:
        # straight from the fake: the fake's CPU
        timed_stream(client, f"{fake.base_url}/chat/completions", direct_body, openai_text)
        before = cpu_seconds(fake.pid)
        for _ in range(direct_streams):
            timed_stream(client, f"{fake.base_url}/chat/completions", direct_body, openai_text)
        fake_s = cpu_seconds(fake.pid) - before

        # through the chain, provider openai → the same fake
        gateway, runtime = server.pid, server.runtime_pid()
        url = f"{server.url}/resolve/api/chat"
        timed_stream(client, url, chat_body, resolve_text, server.headers)  # warm-up
        g0, r0 = cpu_seconds(gateway), cpu_seconds(runtime)
        for _ in range(streams):
            timed_stream(client, url, chat_body, resolve_text, server.headers)
        openai_gateway, openai_runtime = cpu_seconds(gateway) - g0, cpu_seconds(runtime) - r0

        # through the chain, provider scripted (a server of its own)
        scripted = ctx.scripted([long_turn()])
        gateway, runtime = scripted.pid, scripted.runtime_pid()
        url = f"{scripted.url}/resolve/api/chat"
        sample = timed_stream(client, url, chat_body, resolve_text, scripted.headers)
        # deltas that arrive together are one event: check the text, not the event count
        streamed = "".join(resolve_text(frame) for frame in frames(sample.body))
        if streamed != str(long_turn()["content"]):
            raise BenchError("the scripted server did not stream the long turn")
        g0, r0 = cpu_seconds(gateway), cpu_seconds(runtime)
        for _ in range(streams):
            timed_stream(client, url, chat_body, resolve_text, scripted.headers)
        scripted_gateway, scripted_runtime = cpu_seconds(gateway) - g0, cpu_seconds(runtime) - r0

    chunks = fake.chunks
    if fake_s <= 0:
        raise BenchError(f"the fake used no measurable CPU time over {direct_streams} streams")
    openai = _per_1000(openai_gateway + openai_runtime, streams, chunks)
    baseline = _per_1000(fake_s, direct_streams, chunks)
    note = f"{streams} streams of 2,000 chunks; gateway + runtime"
    ctx.log(
        f"cpu: openai chain {openai:.0f} ms, scripted chain "
        f"{_per_1000(scripted_gateway + scripted_runtime, streams, SCRIPTED_CHUNKS):.0f} ms, "
        f"fake {baseline:.0f} ms per 1,000 chunks"
    )
    return [
        Figure("cpu_per_1000_chunks_ms", openai, "ms", note=f"provider openai; {note}"),
        Figure(
            "cpu_per_1000_chunks_gateway_ms",
            _per_1000(openai_gateway, streams, chunks),
            "ms",
            Goal(30.0),
            note="provider openai; the gateway's part",
        ),
        Figure(
            "cpu_per_1000_chunks_runtime_ms",
            _per_1000(openai_runtime, streams, chunks),
            "ms",
            note="provider openai; agent-httpd's part",
        ),
        Figure(
            "cpu_per_1000_chunks_scripted_ms",
            _per_1000(scripted_gateway + scripted_runtime, streams, SCRIPTED_CHUNKS),
            "ms",
            note=f"provider scripted; {note}",
        ),
        Figure(
            "cpu_per_1000_chunks_scripted_runtime_ms",
            _per_1000(scripted_runtime, streams, SCRIPTED_CHUNKS),
            "ms",
            note="provider scripted; agent-httpd's part",
        ),
        Figure(
            "fake_cpu_per_1000_chunks_ms",
            baseline,
            "ms",
            note=f"baseline: the fake serving {direct_streams} streams straight",
        ),
        Figure(
            "cpu_chain_vs_fake_ratio",
            openai / baseline,
            "x",
            note="cpu_per_1000_chunks_ms / fake_cpu_per_1000_chunks_ms",
        ),
    ]
