"""What the real Messages API refuses, and how it counts cached tokens, for the fake server.

Each rule answers 400 ``invalid_request_error`` with the API's own wording (as observed and as
documented at https://docs.claude.com/en/docs/build-with-claude/extended-thinking and
https://docs.claude.com/en/docs/build-with-claude/prompt-caching):

- thinking on: ``budget_tokens`` at least 1024 and below ``max_tokens``; no temperature but 1;
  no forced tool choice; the assistant turn of an ongoing tool loop (the last user message holds
  ``tool_result``) must open with a ``thinking`` or ``redacted_thinking`` block;
- a ``thinking`` block sent back must be one the server signed, unchanged (text and signature);
- at most 4 ``cache_control`` breakpoints, never on a thinking block or an empty text block.

Caching: a breakpoint's prefix (tools, then system, then messages, up to and including the
marked block), or one up to 20 blocks shorter, seen at a breakpoint of an earlier request is a
cache read; the part up to the last breakpoint
that is not is a cache write; the rest is plain input. Tokens are four characters of JSON.
"""

from __future__ import annotations

import json
from typing import Any

THINKING_TYPES = ("thinking", "redacted_thinking")
LOOKBACK = 20
LOOP_RULE = (
    "messages.{m}.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
    "`{found}`. When `thinking` is enabled, a final `assistant` message must start with a "
    "thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We "
    "recommend you include thinking blocks from previous turns. To avoid this requirement, "
    "disable `thinking`. Please consult our documentation at "
    "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
)


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def refusal(body: Any, signed: dict[str, str]) -> str | None:
    """The message of the 400 the API would answer ``body`` with; None when it accepts it.
    ``signed`` maps each signature the server issued to its thinking text."""
    if not isinstance(body, dict):
        return "request body must be a JSON object"
    messages = body.get("messages") or []
    thinking = body.get("thinking")
    on = isinstance(thinking, dict) and thinking.get("type") == "enabled"
    if on:
        budget = int(thinking.get("budget_tokens") or 0)
        if budget < 1024:
            return "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
        if int(body.get("max_tokens") or 0) <= budget:
            return "`max_tokens` must be greater than `thinking.budget_tokens`"
        if body.get("temperature") not in (None, 1, 1.0):
            return "`temperature` may only be set to 1 when thinking is enabled"
        choice = body.get("tool_choice")
        if isinstance(choice, dict) and choice.get("type") in ("any", "tool"):
            return "Thinking may not be enabled when tool_choice forces tool use."
        if len(messages) >= 2 and messages[-1].get("role") == "user":
            last = _blocks(messages[-1].get("content"))
            turn = messages[-2]
            turn_blocks = _blocks(turn.get("content"))
            if (
                any(b.get("type") == "tool_result" for b in last)
                and turn.get("role") == "assistant"
                and any(b.get("type") == "tool_use" for b in turn_blocks)
                and turn_blocks[0].get("type") not in THINKING_TYPES
            ):
                return LOOP_RULE.format(m=len(messages) - 2, found=turn_blocks[0].get("type"))
    marks = 0
    for tool in body.get("tools") or []:
        marks += "cache_control" in tool
    system = body.get("system")
    for block in _blocks(system):
        marks += "cache_control" in block
    for m, message in enumerate(messages):
        for b, block in enumerate(_blocks(message.get("content"))):
            where = f"messages.{m}.content.{b}"
            if "cache_control" in block:
                marks += 1
                if block.get("type") in THINKING_TYPES:
                    return f"{where}.thinking.cache_control: Extra inputs are not permitted"
                if block.get("type") == "text" and not block.get("text"):
                    return f"{where}.text: cache_control cannot be set for empty text blocks"
            if block.get("type") == "thinking":
                if signed.get(str(block.get("signature"))) != block.get("thinking"):
                    return f"{where}: Invalid `signature` in `thinking` block"
    if marks > 4:
        return f"A maximum of 4 blocks with cache_control may be provided. Found {marks}."
    return None


def _unmarked(block: Any) -> Any:
    """A block as the cache keys it: without its ``cache_control`` marker."""
    if isinstance(block, dict):
        return {k: v for k, v in block.items() if k != "cache_control"}
    return block


def _tokens(obj: Any) -> int:
    return len(json.dumps(obj, sort_keys=True)) // 4


def cache_usage(body: dict[str, Any], seen: set[str]) -> dict[str, int]:
    """``input_tokens``, ``cache_read_input_tokens`` and ``cache_creation_input_tokens`` for
    ``body``; the prefixes it caches are added to ``seen``."""
    pieces: list[Any] = []
    ends: list[int] = []  # after which piece a breakpoint falls
    for tool in body.get("tools") or []:
        pieces.append(_unmarked(tool))
        if "cache_control" in tool:
            ends.append(len(pieces))
    system = body.get("system")
    for block in _blocks(system) if isinstance(system, list) else [system] if system else []:
        pieces.append(_unmarked(block))
        if isinstance(block, dict) and "cache_control" in block:
            ends.append(len(pieces))
    for message in body.get("messages") or []:
        content = message.get("content")
        for block in _blocks(content) if isinstance(content, list) else [content]:
            pieces.append({"role": message.get("role"), "block": _unmarked(block)})
            if isinstance(block, dict) and "cache_control" in block:
                ends.append(len(pieces))
    total = _tokens(pieces)
    read_end = 0
    for end in ends:  # each breakpoint looks back up to 20 blocks for a cached prefix
        for start in range(end, max(0, end - LOOKBACK), -1):
            if start > read_end and json.dumps(pieces[:start], sort_keys=True) in seen:
                read_end = start
                break
    read = _tokens(pieces[:read_end]) if read_end else 0
    last = ends[-1] if ends else 0
    write = _tokens(pieces[:last]) - read if last > read_end else 0
    for end in ends:
        seen.add(json.dumps(pieces[:end], sort_keys=True))
    return {
        "input_tokens": max(1, total - read - write),
        "cache_read_input_tokens": read,
        "cache_creation_input_tokens": write,
    }
