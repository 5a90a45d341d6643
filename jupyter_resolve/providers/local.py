"""``c.Resolve.provider = "local"``: a GGUF model on a llama.cpp server the gateway runs itself.

The requests are the OpenAI provider's, sent to the server :mod:`.local_server` supervises
(started on first use), for a family marked ``cache_prompt`` so the server reuses the KV cache
of the prompt's unchanged prefix. What a real llama.cpp server does differently is handled by
what the stream shows, not by the server's name (:class:`StreamTally`):

- a stream without usage gets an estimated usage chunk (``usage.estimated: true``);
- an empty stream (a 200 with no chunk: llama-cpp-python's ``chatml-function-calling`` cannot
  stream an automatic tool choice) is asked again without streaming when the request offered
  tools, and tool turns go unstreamed from then on; otherwise it is an error that names the
  server and what to change, never a silent empty answer.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from contextlib import aclosing
from pathlib import Path
from typing import Any, cast

from ..contracts.context import CHARS_PER_TOKEN, MESSAGE_OVERHEAD
from ..contracts.errors import ProviderError
from .base import Chunk
from .chunks import ChunkBuilder
from .families import Family
from .local_server import ALIAS, LocalModelServer
from .openai import OpenAIProvider, completion_to_chunks

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

    def estimated_usage(self, payload: dict[str, Any]) -> Chunk:
        """A usage chunk from the characters sent and received, marked ``estimated``."""
        chars, messages = prompt_chars(payload)
        chunk = ChunkBuilder(self.model or ALIAS).usage(
            estimated_tokens(chars) + MESSAGE_OVERHEAD * messages,
            estimated_tokens(self.answer_chars),
        )
        chunk["usage"]["estimated"] = True
        return chunk


class LocalProvider(OpenAIProvider):
    """The OpenAI wire to the supervised llama.cpp server on loopback; no key."""

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
        self.stream_tools = True  # False once the server sent an empty stream for a tool turn

    def describe(self) -> dict[str, Any]:
        return {
            **super().describe(),
            # only while it runs: a dead server is started again on the next call, so the
            # health check's "nothing answers at ..." (c.Resolve.base_url) would mislead
            "base_url": self.server.base_url if self.server.pid else "",
            "stream_tools": self.stream_tools,
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
        tally = StreamTally()
        # the model may choose a tool: the turn a server may not be able to stream
        free_choice = bool(payload.get("tools")) and payload.get("tool_choice") in (None, "auto")
        for attempt in (1, 2):
            if free_choice and not self.stream_tools:
                chunks = self._unstreamed(payload)
            else:
                chunks = cast(Stream, super().stream_chat(body, run_id))
            try:
                async with aclosing(chunks) as stream:
                    async for chunk in stream:
                        tally.see(chunk)
                        yield chunk
                break
            except ProviderError as exc:
                if attempt == 2 or tally.choices or exc.code != "provider_unreachable":
                    raise
                # it died between the check and the request: start it again, once
                self.base_url = await self.server.restart()
        if not tally.choices and free_choice and self.stream_tools:
            # llama-cpp-python fails after its 200 when the model picks a tool in a streamed
            # round (chatml-function-calling): ask unstreamed, and so from then on
            async with aclosing(self._unstreamed(payload)) as stream:
                async for chunk in stream:
                    tally.see(chunk)
                    yield chunk
            self.stream_tools = not tally.choices
        if not tally.choices:
            raise ProviderError(
                f"{self.label} at {self.base_url} sent an empty stream: the prompt may not fit "
                f"c.Resolve.local_context ({self.server.context}), or the model "
                f"({Path(self.server.model_path).name}) failed",
                status=502,
                code="provider_empty_stream",
                hint="raise c.Resolve.local_context, lower c.Resolve.context_tokens, or try "
                "another GGUF in c.Resolve.local_model",
            )
        if not tally.usage:
            yield tally.estimated_usage(payload)

    async def _unstreamed(self, payload: dict[str, Any]) -> Stream:
        """One round asked with ``stream: false``, as chunks."""
        whole = {k: v for k, v in payload.items() if k != "stream_options"}
        whole["stream"] = False
        url = f"{self.base_url}/chat/completions"
        async with aclosing(self._events(url, self.headers(), whole)) as events:
            async for event in events:
                if isinstance(event, dict):
                    for chunk in completion_to_chunks(event, True):
                        yield chunk
                    return

    async def aclose(self) -> None:
        await super().aclose()
        await self.server.stop()
