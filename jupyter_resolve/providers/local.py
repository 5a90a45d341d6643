"""``c.Resolve.provider = "local"``: a GGUF model on a llama.cpp server the gateway runs itself.

Each round is one streamed ``/v1/completions`` request to the server :mod:`.local_server`
supervises (started on first use): the prompt rendered here (:mod:`.local_prompt`) with the
round's tools listed compactly, the answer held by a grammar to a message or one call whose
arguments parse against its tool's schema, read back as chat chunks (:mod:`.local_round`). So
the model sees its tools in every round it may use them (llama-cpp-python's own chat rendering
shows none unless a tool is named, and cannot stream a round where the model chooses), its
calls parse, a tool's result is in its next prompt, and each prompt extends the one before, so
the server's KV cache holds the prefix (``cache_prompt``). A small model gets a lean tool set
(``c.Resolve.local_tools``, in the order it lists them: the first is the one it reaches for).

What the real server does differently is handled by what it sends:

- it sends no usage in a stream: a usage chunk counted from the prompt and the answer is added
  (``usage.estimated: true``);
- an empty stream (a 200 with nothing: a prompt over its context) is asked again unstreamed,
  which gets the server's reason; never a silent empty answer.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from contextlib import aclosing
from pathlib import Path
from typing import Any, cast

from ..contracts.context import CHARS_PER_TOKEN, MESSAGE_OVERHEAD
from ..contracts.errors import ProviderError
from ..contracts.sse import DONE
from .base import Chunk
from .chunks import ChunkBuilder
from .families import Family
from .local_prompt import END, answer_grammar, render
from .local_round import RoundReader
from .local_server import ALIAS, LocalModelServer
from .openai import OpenAIProvider

LOCAL_FAMILY = Family(prefixes=(ALIAS,), cache_prompt=True)
Stream = AsyncGenerator[Chunk, None]


def estimated_tokens(text_chars: int) -> int:
    return int(text_chars / CHARS_PER_TOKEN + 0.999)


def prompt_chars(payload: dict[str, Any]) -> tuple[int, int]:
    """The characters of the prompt (messages and tools) and its message count."""
    messages = payload.get("messages") or []
    chars = len(json.dumps(messages)) + len(json.dumps(payload.get("tools") or []))
    return chars, len(messages)


class StreamTally:
    """What one completion's chunks carried: any choice at all, usage, and the answer's size."""

    def __init__(self) -> None:
        self.choices = 0
        self.usage = False
        self.answer_chars = 0
        self.model = ""

    def see(self, chunk: Chunk) -> None:
        self.model = self.model or str(chunk.get("model") or "")
        if isinstance(chunk.get("usage"), dict):
            self.usage = True
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") if isinstance(choice, dict) else None
            if not isinstance(delta, dict):
                continue
            if delta or choice.get("finish_reason"):
                self.choices += 1
            for key in ("content", "reasoning_content"):
                if isinstance(delta.get(key), str):
                    self.answer_chars += len(delta[key])
            for call in delta.get("tool_calls") or []:
                function = call.get("function") if isinstance(call, dict) else None
                if isinstance(function, dict):
                    self.answer_chars += len(str(function.get("name") or ""))
                    self.answer_chars += len(str(function.get("arguments") or ""))

    def estimated_usage(self, payload: dict[str, Any], prompt: str | None = None) -> Chunk:
        """A usage chunk from the characters sent (the rendered ``prompt``, else the
        messages) and received, marked ``estimated``."""
        chars, messages = prompt_chars(payload)
        sent = (
            estimated_tokens(len(prompt))
            if prompt is not None
            else estimated_tokens(chars) + MESSAGE_OVERHEAD * messages
        )
        chunk = ChunkBuilder(self.model or ALIAS).usage(sent, estimated_tokens(self.answer_chars))
        chunk["usage"]["estimated"] = True
        return chunk


def ordered(tools: Sequence[Any], first: Sequence[str]) -> list[dict[str, Any]]:
    """``tools`` with those named in ``first`` first, in its order (the rest as they came)."""
    rank = {name: i for i, name in enumerate(first)}

    def key(tool: Any) -> int:
        name = (tool.get("function") or {}).get("name") if isinstance(tool, dict) else None
        return rank.get(str(name), len(rank))

    return sorted((t for t in tools if isinstance(t, dict)), key=key)


class LocalProvider(OpenAIProvider):
    """The supervised llama.cpp server on loopback; no key."""

    name = "local"
    label = "the local llama.cpp server"

    def __init__(
        self,
        server: LocalModelServer,
        *,
        timeout: float = 120,
        families: Mapping[str, Family] | None = None,
        max_tokens: int = 512,
        tool_choice: str = "",
        tools: Sequence[str] = (),
        temperature: float = 0.0,
        seed: int = 0,
    ) -> None:
        super().__init__(
            "",
            None,
            ALIAS,
            families={**dict(families or {}), ALIAS: LOCAL_FAMILY},
            timeout=timeout,
            max_retries=1,
        )
        self.server = server
        self.max_tokens = max_tokens
        self.tool_choice = tool_choice
        self.temperature = temperature
        self.seed = seed
        # what a run offers the model when its soul names no tools: a small window's lean set
        self.lean_tools: tuple[str, ...] | None = tuple(tools) or None

    def describe(self) -> dict[str, Any]:
        return {
            **super().describe(),
            # only while it runs: a dead server is started again on the next call, so the
            # health check's "nothing answers at ..." (c.Resolve.base_url) would mislead
            "base_url": self.server.base_url if self.server.pid else "",
            "local": self.server.describe(),
        }

    def payload(self, body: dict[str, Any]) -> dict[str, Any]:
        """The OpenAI provider's body for the one model the server serves, its answer bounded
        and, when configured, a tool forced in a round that answers a person."""
        payload = super().payload({**body, "model": ALIAS})
        payload.setdefault("max_tokens", self.max_tokens)
        if self.tool_choice and self._answers_a_person(payload):
            payload["tool_choice"] = {"type": "function", "function": {"name": self.tool_choice}}
        return payload

    def _answers_a_person(self, payload: dict[str, Any]) -> bool:
        """Whether the forced tool is offered and the last message is the person's."""
        offered = {
            str((tool.get("function") or {}).get("name"))
            for tool in payload.get("tools") or []
            if isinstance(tool, dict)
        }
        messages = payload.get("messages") or []
        last = messages[-1] if messages and isinstance(messages[-1], dict) else {}
        return self.tool_choice in offered and last.get("role") == "user"

    def completion(self, payload: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        """The ``/v1/completions`` request for a chat ``payload``, and whether it offers
        tools (then the answer is held by the grammar: words, or one call that parses)."""
        choice = payload.get("tool_choice")
        tools = [] if choice == "none" else ordered(payload.get("tools") or [], self.order())
        forced = ""
        if isinstance(choice, dict):
            forced = str((choice.get("function") or {}).get("name") or "")
        request: dict[str, Any] = {
            "model": ALIAS,
            "prompt": render(payload.get("messages") or [], tools),
            "stream": True,
            "max_tokens": payload.get("max_tokens") or self.max_tokens,
            "temperature": payload.get("temperature", self.temperature),
            "seed": self.seed,
            "stop": [END],
            "cache_prompt": True,
        }
        if tools:
            request["grammar"] = answer_grammar(tools, forced=forced)
        return request, bool(tools)

    def order(self) -> tuple[str, ...]:
        """The tools the model is shown first (the lean set's order, then the forced one)."""
        return (*(self.lean_tools or ()), self.tool_choice)

    async def list_models(self) -> list[dict[str, Any]]:
        return [{"id": ALIAS, "name": Path(self.server.model_path).name}]

    async def relay(self, body: dict[str, Any], run_id: str | None) -> AsyncIterator[Chunk | bytes]:
        """Chunks, not relayed bytes: each is looked at (loopback makes that cheap)."""
        async with aclosing(cast(Stream, self.stream_chat(body, run_id))) as chunks:
            async for chunk in chunks:
                yield chunk

    async def stream_chat(self, body: dict[str, Any], run_id: str | None) -> AsyncIterator[Chunk]:
        self.base_url = await self.server.ensure()
        payload = self.payload(body)
        request, tools = self.completion(payload)
        tally = StreamTally()
        for attempt in (1, 2):
            try:
                async with aclosing(self._round(request, tools)) as stream:
                    async for chunk in stream:
                        tally.see(chunk)
                        yield chunk
                break
            except ProviderError as exc:
                if attempt == 2 or tally.choices or exc.code != "provider_unreachable":
                    raise
                # it died between the check and the request: start it again, once
                self.base_url = await self.server.restart()
        if not tally.choices:
            raise await self._empty(request)
        if not tally.usage:
            yield tally.estimated_usage(payload, str(request["prompt"]))

    async def _round(self, request: dict[str, Any], tools: bool) -> Stream:
        """The round's chunks, from the completion's streamed text."""
        reader = RoundReader(ChunkBuilder(ALIAS), tools=tools)
        finish = "stop"
        url = f"{self.base_url}/completions"
        async with aclosing(self._events(url, self.headers(), request)) as events:
            async for event in events:
                objects = [event] if isinstance(event, dict) else []
                if not isinstance(event, dict):
                    if event.data.strip() == DONE:
                        break
                    objects = self._parse(event)
                for obj in objects:
                    for choice in obj.get("choices") or [] if isinstance(obj, dict) else []:
                        for chunk in reader.feed(str(choice.get("text") or "")):
                            yield chunk
                        finish = choice.get("finish_reason") or finish
        if reader.text:
            for chunk in reader.close(finish):
                yield chunk

    async def _empty(self, request: dict[str, Any]) -> ProviderError:
        """An empty stream: the same request unstreamed gets the server's reason."""
        url = f"{self.base_url}/completions"
        whole = {**request, "stream": False, "max_tokens": 1}
        try:
            async with aclosing(self._events(url, self.headers(), whole)) as events:
                async for _ in events:
                    break
        except ProviderError as exc:
            reason = f"; asked again, it said: {exc.detail or exc.message}"
        else:
            reason = ""
        return ProviderError(
            f"{self.label} at {self.base_url} sent an empty stream{reason}; the prompt may not "
            f"fit c.Resolve.local_context ({self.server.context}), or the model "
            f"({Path(self.server.model_path).name}) failed",
            status=502,
            code="provider_empty_stream",
            hint="raise c.Resolve.local_context, lower c.Resolve.context_tokens, or try "
            "another GGUF in c.Resolve.local_model",
        )

    async def aclose(self) -> None:
        await super().aclose()
        await self.server.stop()
