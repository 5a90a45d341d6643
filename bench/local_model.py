"""The local model (issue 34.4): SmolLM2-135M-Instruct on the llama.cpp server the gateway runs.

A real ``jupyter server`` with ``--Resolve.provider=local`` (no tools, 16 tokens a round, one
thread), and the same llama.cpp server asked directly (its URL from ``/resolve/api/health``):

- ``local_first_token_overhead_ms``: time to the first text token through
  ``POST /resolve/api/chat`` minus the time to the first token straight from the server with the
  same client, medians of each; each side repeats one prompt in a block of its own, so the
  server's prompt cache holds it and both evaluate about the same few tokens;
- ``local_prompt_tokens_10_turns``: the prompt tokens the server evaluated over a 10-turn session
  (its own timing lines, health's ``provider.local.prompt_tokens_evaluated``), against
  ``local_new_tokens_10_turns``, the sum of what each turn's prompt added to the one before
  (the limit a perfect prefix cache reaches), and ``local_prompt_tokens_10_turns_sent``, every
  prompt's whole length (no cache at all).
"""

from __future__ import annotations

import importlib.util
import json
import tempfile
from pathlib import Path
from typing import Any

import httpx

from tests.launcher import JupyterServer

from .chain import openai_text, resolve_text, timed_stream
from .core import BenchError, Context, Figure, NotMeasured, median

TURNS = 10
ARGV = ("--Resolve.provider=local", "--Resolve.local_threads=1", "--Resolve.local_max_tokens=16")
# a soul without tools keeps every round streamed and the prompt short
SOUL = "---\nname: plain\nrole: specialist\ndescription: no tools\n---\nBe brief.\n"


def _local(server: JupyterServer) -> dict[str, Any]:
    provider: dict[str, Any] = server.health()["provider"]
    local = provider.get("local")
    if not isinstance(local, dict) or local.get("state") != "ready":
        raise BenchError(f"the local model server is not ready: {provider}")
    return {**local, "base_url": provider.get("base_url")}


def _chat(client: httpx.Client, server: JupyterServer, body: dict[str, Any]) -> str:
    """One whole chat; its session id."""
    url = f"{server.url}/resolve/api/chat"
    with client.stream("POST", url, json=body, headers=server.headers) as response:
        text = response.read().decode()
    if "event: run.completed" not in text:
        raise BenchError(f"a chat on the local model did not complete: {text[-300:]}")
    for line in text.splitlines():
        if line.startswith("data:") and '"session_id"' in line:
            return str(json.loads(line[5:]).get("session_id") or "")
    return ""


def first_token(ctx: Context, server: JupyterServer, client: httpx.Client) -> list[Figure]:
    n = ctx.repeats(3, 10)
    prompt = "Name one colour."
    body = {"messages": [{"role": "user", "content": prompt}], "soul": "plain"}
    chain_url = f"{server.url}/resolve/api/chat"
    chain = [
        timed_stream(client, chain_url, body, resolve_text, server.headers).first_token_s
        for _ in range(n + 1)
    ][1:]
    direct_url = f"{_local(server)['base_url']}/chat/completions"
    direct_body = {"messages": body["messages"], "model": "local", "stream": True, "max_tokens": 16}
    direct = [
        timed_stream(client, direct_url, direct_body, openai_text).first_token_s
        for _ in range(n + 1)
    ][1:]
    chain_ms, direct_ms = 1000 * median(chain), 1000 * median(direct)
    return [
        Figure("local_first_token_overhead_ms", round(chain_ms - direct_ms, 1), "ms"),
        Figure("local_chain_first_token_ms", round(chain_ms, 1), "ms"),
        Figure("local_direct_first_token_ms", round(direct_ms, 1), "ms"),
    ]


def ten_turns(server: JupyterServer, client: httpx.Client) -> list[Figure]:
    """Per turn: the prompt's length and the answer's (llama.cpp's counts); the limit counts
    of each prompt only what is not the previous prompt and answer, which the KV cache holds."""
    before = _local(server)
    session = ""
    prompts: list[int] = []
    answers: list[int] = []
    last = before
    for turn in range(TURNS):
        message = {"role": "user", "content": f"Turn {turn}: name a fruit."}
        body: dict[str, Any] = {"messages": [message], "soul": "plain"}
        if session:
            body["session_id"] = session
        session = _chat(client, server, body) or session
        now = _local(server)
        prompts.append(now["prompt_tokens_sent"] - last["prompt_tokens_sent"])
        answers.append(now["tokens_generated"] - last["tokens_generated"])
        last = now
    evaluated = last["prompt_tokens_evaluated"] - before["prompt_tokens_evaluated"]
    held = [0, *(p + a for p, a in zip(prompts, answers, strict=True))][:TURNS]
    new = sum(max(0, p - h) for p, h in zip(prompts, held, strict=True))
    return [
        Figure("local_prompt_tokens_10_turns", evaluated, "tok"),
        Figure("local_new_tokens_10_turns", new, "tok"),
        Figure("local_prompt_tokens_10_turns_sent", sum(prompts), "tok"),
    ]


def local_model(ctx: Context) -> list[Figure]:
    if importlib.util.find_spec("llama_cpp") is None:
        raise NotMeasured("the local extra (llama-cpp-python) is not installed")
    workdir = Path(ctx.stack.enter_context(_tempdir()))
    souls = workdir / "root" / ".resolve" / "souls"
    souls.mkdir(parents=True)
    (souls / "plain.md").write_text(SOUL)
    server = ctx.stack.enter_context(
        JupyterServer(workdir, argv=ARGV, env={"HOME": str(workdir)}, ready="runtime")
    )
    with httpx.Client(timeout=120, trust_env=False) as client:
        _chat(client, server, {"messages": [{"role": "user", "content": "Hi"}], "soul": "plain"})
        return [*first_token(ctx, server, client), *ten_turns(server, client)]


def _tempdir() -> tempfile.TemporaryDirectory[str]:
    return tempfile.TemporaryDirectory(prefix="bench-local-")
