"""OpenAI chat completions <-> Anthropic Messages API (pure: no I/O).

:func:`to_messages_request` turns the runtime's OpenAI request into a Messages request;
:class:`StreamTranslator` turns the Messages stream events back into OpenAI chunks. Tool-call
indexes in the chunks count ``tool_use`` blocks only (0, 1, ...), whatever their block index.

Extended thinking: a finished ``thinking`` block (its text and ``signature``) and a
``redacted_thinking`` block leave the stream as a ``thinking_blocks`` delta (LiteLLM's name for
them on the OpenAI wire); the text also streams as ``reasoning_content``. An assistant message
carrying ``thinking_blocks`` gets them back, unchanged and first, when thinking is on: the API
answers 400 when the turn that carries ``tool_use`` in a tool loop lacks them.

Prompt caching: ``cache_control`` breakpoints go on the last tool, the system text, the last
block of the last message (what the next round resends as its prefix) and the newest elided tool
output before it: the end of the history a fitting step left stable (contracts/context.py), so a
later step, which elides from there on, still reads everything before it from the cache.
"""

from __future__ import annotations

import json
from typing import Any

from ..contracts.bodies import text_of
from ..contracts.context import ELIDED_MARK
from .anthropic_stream import StreamTranslator

ANTHROPIC_VERSION = "2023-06-01"
__all__ = ["ANTHROPIC_VERSION", "StreamTranslator", "to_messages_request"]

EPHEMERAL = {"type": "ephemeral"}
THINKING_TYPES = ("thinking", "redacted_thinking")


def _blocks(content: Any) -> list[dict[str, Any]]:
    """OpenAI message content as Anthropic content blocks (text only; empty text dropped)."""
    text = text_of(content)
    return [{"type": "text", "text": text}] if text else []


def _arguments(raw: Any) -> Any:
    if isinstance(raw, dict):
        return raw
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except (TypeError, ValueError):
        return {"_raw": str(raw)}
    return value if isinstance(value, dict) else {"value": value}


def thinking_blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The well-formed thinking blocks an assistant message carries, each as it came."""
    out: list[dict[str, Any]] = []
    for block in message.get("thinking_blocks") or []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "thinking" and isinstance(block.get("signature"), str):
            out.append(dict(block))
        elif kind == "redacted_thinking" and isinstance(block.get("data"), str):
            out.append(dict(block))
    return out


def to_messages(
    messages: list[dict[str, Any]], *, keep_thinking: bool = False
) -> tuple[str, list[dict[str, Any]]]:
    """The ``system`` text and the Messages-API ``messages`` for OpenAI ``messages``.

    Consecutive messages of one role are merged (so consecutive tool results form one user
    message, tool results first). With ``keep_thinking`` an assistant message's
    ``thinking_blocks`` open its content.
    """
    system: list[str] = []
    out: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})

    for message in messages:
        role = message.get("role")
        content = message.get("content")
        if role in ("system", "developer"):
            text = text_of(content)
            if text:
                system.append(text)
        elif role == "user":
            add("user", _blocks(content))
        elif role == "assistant":
            blocks = thinking_blocks(message) if keep_thinking else []
            blocks += _blocks(content)
            for call in message.get("tool_calls") or []:
                function = call.get("function") or {}
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": call.get("id") or "",
                        "name": function.get("name") or "",
                        "input": _arguments(function.get("arguments")),
                    }
                )
            add("assistant", blocks)
        elif role == "tool":
            add(
                "user",
                [
                    {
                        "type": "tool_result",
                        "tool_use_id": message.get("tool_call_id") or "",
                        "content": text_of(content),
                    }
                ],
            )
    return "\n\n".join(system), out


def to_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI function tools as Anthropic tools."""
    out: list[dict[str, Any]] = []
    for tool in tools:
        inner = tool.get("function")
        function: dict[str, Any] = inner if isinstance(inner, dict) else tool
        entry: dict[str, Any] = {
            "name": function.get("name") or "",
            "input_schema": function.get("parameters") or {"type": "object", "properties": {}},
        }
        if function.get("description"):
            entry["description"] = function["description"]
        out.append(entry)
    return out


def to_tool_choice(choice: Any) -> dict[str, Any] | None:
    if choice == "auto":
        return {"type": "auto"}
    if choice == "required":
        return {"type": "any"}
    if choice == "none":
        return {"type": "none"}
    if isinstance(choice, dict):
        name = (choice.get("function") or {}).get("name")
        if name:
            return {"type": "tool", "name": name}
    return None


def loop_turn_has_thinking(messages: list[dict[str, Any]]) -> bool:
    """False when the request continues a tool loop (its last message holds tool results)
    whose assistant turn does not open with a thinking block: with thinking on, the API
    refuses that, so such a request goes without thinking (a turn made with thinking off, or
    by another provider)."""
    if len(messages) < 2 or messages[-1]["role"] != "user":
        return True
    if not any(b.get("type") == "tool_result" for b in messages[-1]["content"]):
        return True
    turn = messages[-2]["content"] if messages[-2]["role"] == "assistant" else []
    return bool(turn) and turn[0].get("type") in THINKING_TYPES


def _mark_stable_history(messages: list[dict[str, Any]]) -> None:
    """``cache_control`` on the newest elided tool result before the last message."""
    for message in reversed(messages[:-1]):
        content = message["content"]
        for i in range(len(content) - 1, -1, -1):
            block = content[i]
            text = block.get("content")
            if block.get("type") == "tool_result" and str(text).startswith(ELIDED_MARK):
                content[i] = {**block, "cache_control": EPHEMERAL}
                return


def mark_cache(request: dict[str, Any]) -> None:
    """Put ``cache_control`` on the last tool, the system text, the newest elided tool output
    before the last message and the last block of the last message that can carry it (not
    thinking, not empty text): the four allowed."""
    tools = request.get("tools")
    if tools:
        tools[-1] = {**tools[-1], "cache_control": EPHEMERAL}
    if request.get("system"):
        request["system"] = [
            {"type": "text", "text": request["system"], "cache_control": EPHEMERAL}
        ]
    messages = request.get("messages") or []
    _mark_stable_history(messages)
    if messages:
        content = messages[-1]["content"]
        for i in range(len(content) - 1, -1, -1):
            block = content[i]
            if block.get("type") in THINKING_TYPES or block == {"type": "text", "text": ""}:
                continue
            content[i] = {**block, "cache_control": EPHEMERAL}
            break


def to_messages_request(
    body: dict[str, Any],
    *,
    model: str,
    max_tokens: int,
    thinking: int = 0,
    cache: bool = False,
) -> dict[str, Any]:
    """The Messages-API request for an OpenAI chat-completions ``body``.

    The body's ``model`` wins over ``model`` (the configured default). ``max_tokens`` is the
    default when the body sets neither ``max_tokens`` nor ``max_completion_tokens``.
    ``thinking`` (a budget in tokens, 0: off) turns extended thinking on, unless the request
    forces a tool or continues a tool loop whose turn has no thinking block (the API refuses
    both); then ``max_tokens`` is raised above the budget and sampling settings it refuses
    are left out. ``cache`` marks the prompt-caching breakpoints.
    """
    raw = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    choice = to_tool_choice(body.get("tool_choice"))
    forced = choice is not None and choice["type"] in ("any", "tool")
    think = thinking > 0 and not forced
    system, messages = to_messages(raw, keep_thinking=think)
    if think and not loop_turn_has_thinking(messages):
        think = False
        system, messages = to_messages(raw)
    limit = int(body.get("max_completion_tokens") or body.get("max_tokens") or max_tokens)
    request: dict[str, Any] = {
        "model": body.get("model") or model or "",
        "max_tokens": limit,
        "messages": messages,
        "stream": True,
    }
    if system:
        request["system"] = system
    tools = [t for t in body.get("tools") or [] if isinstance(t, dict)]
    if tools:
        request["tools"] = to_tools(tools)
        if choice is not None:
            request["tool_choice"] = choice
    for key in ("temperature", "top_p"):
        if body.get(key) is not None:
            request[key] = body[key]
    if think:
        request["thinking"] = {"type": "enabled", "budget_tokens": thinking}
        if limit <= thinking:
            request["max_tokens"] = thinking + limit
        request.pop("temperature", None)  # thinking takes only the default temperature
        if request.get("top_p") is not None and request["top_p"] < 0.95:
            del request["top_p"]
    stop = body.get("stop")
    if stop:
        request["stop_sequences"] = [stop] if isinstance(stop, str) else list(stop)
    if cache:
        mark_cache(request)
    return request
