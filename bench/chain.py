"""Streaming overhead of the chain client → gateway → agent-httpd → gateway → provider.

Baseline: the same fake provider (scenario ``long``, 2,000 chunks) streamed straight, with the
same kind of client (httpx, streaming, one keep-alive connection per side). Straight and chain
requests alternate, after one warm-up of each, and the figures are medians of the per-pair
differences (first token) and ratios (whole stream). The clock stops on the last byte; the
streams are decoded and checked (same text both ways, a clean ``run.completed``) afterwards.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx

from .core import BenchError, Context, Figure, Goal, median
from .floor import bare_url, floor_url

PROMPT = "Stream the long answer, please."


@dataclass(frozen=True)
class Sample:
    first_token_s: float
    total_s: float
    body: bytes


def frames(data: bytes) -> Iterator[dict[str, str]]:
    """The complete SSE frames in ``data`` as {field: value} (``data`` lines joined)."""
    for block in data.replace(b"\r\n", b"\n").split(b"\n\n")[:-1]:
        frame: dict[str, str] = {}
        for line in block.decode("utf-8", errors="replace").split("\n"):
            name, _, value = line.partition(":")
            if name and not line.startswith(":"):
                value = value[1:] if value.startswith(" ") else value
                frame[name] = frame[name] + "\n" + value if name in frame else value
        if frame:
            yield frame


def _json(frame: dict[str, str]) -> Any:
    try:
        return json.loads(frame.get("data", ""))
    except ValueError:
        return None


def openai_text(frame: dict[str, str]) -> str:
    """The text of one OpenAI chunk frame ("" for role, usage, [DONE], ...)."""
    obj = _json(frame)
    if not isinstance(obj, dict) or not obj.get("choices"):
        return ""
    content = (obj["choices"][0].get("delta") or {}).get("content")
    return content if isinstance(content, str) else ""


def resolve_text(frame: dict[str, str]) -> str:
    """The text of one normalized ``text.delta`` frame ("" for any other event)."""
    if frame.get("event") != "text.delta":
        return ""
    obj = _json(frame)
    text = obj.get("text") if isinstance(obj, dict) else None
    return text if isinstance(text, str) else ""


def timed_stream(
    client: httpx.Client,
    url: str,
    body: dict[str, Any],
    text_of: Callable[[dict[str, str]], str],
    headers: dict[str, str] | None = None,
) -> Sample:
    """POST ``body``, stream the answer; time to the first frame with text, and to the end."""
    received = bytearray()
    first: float | None = None
    start = time.perf_counter()
    with client.stream("POST", url, json=body, headers=headers) as response:
        if response.status_code != 200:
            response.read()
            raise BenchError(f"POST {url}: HTTP {response.status_code}: {response.text[:500]}")
        for chunk in response.iter_raw():
            received += chunk
            if first is None and any(text_of(f) for f in frames(bytes(received))):
                first = time.perf_counter()
        end = time.perf_counter()
    if first is None:
        raise BenchError(f"POST {url}: the stream carried no text: {bytes(received[-500:])!r}")
    return Sample(first - start, end - start, bytes(received))


def check_chain(sample: Sample, expected_text: str) -> None:
    """The chain's stream ends with one clean ``run.completed`` and carries the provider's text."""
    events = list(frames(sample.body))
    errors = [f.get("data") for f in events if f.get("event") == "run.error"]
    completed = [_json(f) for f in events if f.get("event") == "run.completed"]
    if errors or len(completed) != 1 or (completed[0] or {}).get("reason") != "stop":
        raise BenchError(
            f"the chain's run did not end cleanly: run.error {errors[:2]}, "
            f"run.completed {completed}"
        )
    text = "".join(resolve_text(f) for f in events)
    if text != expected_text:
        raise BenchError(
            f"the chain's text differs from the provider's: {len(text)} vs "
            f"{len(expected_text)} characters; chain starts {text[:80]!r}, "
            f"provider starts {expected_text[:80]!r}"
        )


def chain_overhead(ctx: Context) -> list[Figure]:
    fake = ctx.fake()
    server = ctx.server()
    runs = ctx.repeats(10, 30)  # 10 quick: a comparison pairs their medians
    direct_url = f"{fake.base_url}/chat/completions"
    direct_body = {
        "model": fake.model,
        "stream": True,
        "messages": [{"role": "user", "content": PROMPT}],
    }
    chain_url = f"{server.url}/resolve/api/chat"
    chain_body = {"messages": [{"role": "user", "content": PROMPT}]}

    direct: list[Sample] = []
    chain: list[Sample] = []
    floors: list[tuple[Sample, Sample]] = []
    timeout = httpx.Timeout(120.0, connect=10.0)
    floor, bare = floor_url(server), bare_url(server)
    with (
        httpx.Client(timeout=timeout) as straight,
        httpx.Client(timeout=timeout) as gateway,
        httpx.Client(timeout=timeout) as noop,
    ):
        expected = ""
        for i in range(runs + 1):  # round 0 is the warm-up of every side
            d = timed_stream(straight, direct_url, direct_body, openai_text)
            c = timed_stream(gateway, chain_url, chain_body, resolve_text, server.headers)
            noops = (  # the floor under it: the no-op through Jupyter, and on bare tornado
                timed_stream(noop, floor, chain_body, resolve_text, server.headers),
                timed_stream(noop, bare, chain_body, resolve_text),
            )
            if i == 0:
                expected = "".join(openai_text(f) for f in frames(d.body))
                if not expected.endswith(f"tok{fake.chunks - 1} "):
                    raise BenchError(f"the fake's reply is not {fake.chunks} chunks long")
                ctx.log(
                    f"chain: {runs} pairs of 2,000-chunk streams "
                    f"(warm-up: straight {d.total_s * 1e3:.0f} ms, chain {c.total_s * 1e3:.0f} ms)"
                )
            check_chain(c, expected)
            if i > 0:
                direct.append(d)
                chain.append(c)
                floors.append(noops)

    jupyter_share = [(f.first_token_s - b.first_token_s) * 1e3 for f, b in floors]
    first_overhead = [
        (c.first_token_s - d.first_token_s) * 1e3 for d, c in zip(direct, chain, strict=True)
    ]
    ratio = [c.total_s / d.total_s for d, c in zip(direct, chain, strict=True)]
    ms = 1e3
    return [
        Figure(
            "chain_first_token_overhead_ms",
            median(first_overhead),
            "ms",
            Goal(2.0),
            note=f"median of {runs} paired differences",
        ),
        Figure(
            "chain_total_overhead_ratio",
            median(ratio),
            "x",
            Goal(1.10),
            note=f"median of {runs} paired ratios",
        ),
        Figure(
            "floor_first_event_ms",
            median([f.first_token_s * ms for f, _ in floors]),
            "ms",
            note="a no-op authenticated Jupyter stream on the same server (bench/floor.py)",
        ),
        Figure(
            "bare_floor_first_event_ms",
            median([b.first_token_s * ms for _, b in floors]),
            "ms",
            note="the same no-op on a bare tornado listener in the same process",
        ),
        Figure(
            "floor_jupyter_share_ms",
            median(jupyter_share),
            "ms",
            note="the two no-ops' paired difference: Jupyter's part of a request",
        ),
        Figure("direct_first_token_ms", median([d.first_token_s * ms for d in direct]), "ms"),
        Figure("chain_first_token_ms", median([c.first_token_s * ms for c in chain]), "ms"),
        Figure("direct_total_ms", median([d.total_s * ms for d in direct]), "ms"),
        Figure("chain_total_ms", median([c.total_s * ms for c in chain]), "ms"),
    ]
