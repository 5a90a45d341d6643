"""A session's transcript (pure): run-log events folded into OpenAI chat messages (DESIGN 9.1).

One run folds to: the user message (``run.started``'s ``prompt``), then per round an assistant
message (its text, and its ``tool_calls`` when it called tools) followed by one ``tool`` message
per call (the output as the runtime gave it to the model, already bounded); a steering message
(``run.message``) is a user message where it took effect, after the round before it. Reasoning
text is not sent back; a turn's signed thinking blocks (logged on its first ``tool.requested``)
are, as the assistant message's ``thinking_blocks``: Anthropic requires them on a tool-use turn.
A run that did not end ``stop`` gives what it has, every call with its result: a call whose
result never came gets a short one saying so (providers reject an orphaned call). A run that
ends on a user message (no answer came) gets a one-line note, so user and assistant alternate.
An external agent's run (``run.started.agent``) gives its prompt and its text: its calls were
its own.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from typing import Any

from .bodies import Event

Message = dict[str, Any]


def _arguments(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value if value is not None else {}, ensure_ascii=False)


def fold_run(events: Sequence[Event]) -> list[Message]:
    """The chat messages one run contributes (empty when it has no ``run.started`` prompt)."""
    if not events or events[0].type != "run.started":
        return []
    prompt = events[0].data.get("prompt")
    if not isinstance(prompt, str) or not prompt:
        return []
    messages: list[Message] = [{"role": "user", "content": prompt}]
    # an external agent's calls are its own tools, not the gateway's: its text only
    external = events[0].data.get("agent") is not None
    text: list[str] = []
    calls: list[Message] = []  # the pending assistant message's tool calls
    thinking: list[Any] = []  # its signed thinking blocks
    results: dict[str, str] = {}
    order: list[str] = []
    reason = "unfinished"

    def flush() -> None:
        nonlocal text, calls, order, thinking
        content = "".join(text)
        if calls:
            turn: Message = {"role": "assistant", "content": content or None, "tool_calls": calls}
            if thinking:
                turn["thinking_blocks"] = thinking
            messages.append(turn)
            for call_id in order:
                output = results.get(call_id)
                if output is None:
                    output = f"[the call did not finish: the run ended {reason}]"
                messages.append({"role": "tool", "tool_call_id": call_id, "content": output})
        elif content:
            messages.append({"role": "assistant", "content": content})
        text, calls, order, thinking = [], [], [], []

    for event in events[1:]:
        data = event.data
        if event.type == "text.delta":
            if calls and all(c in results for c in order):
                flush()  # text after the results: the next round
            text.append(str(data.get("text", "")))
        elif event.type == "tool.requested" and not external:
            if calls and all(c in results for c in order):
                flush()  # a call after the results: the next round
            call_id = str(data.get("call_id", ""))
            if not call_id or call_id in order:
                continue
            calls.append(
                {
                    "id": call_id,
                    "type": "function",
                    "function": {
                        "name": str(data.get("name", "")),
                        "arguments": _arguments(data.get("arguments")),
                    },
                }
            )
            order.append(call_id)
            blocks = data.get("thinking_blocks")
            if isinstance(blocks, list) and not thinking:
                thinking = [b for b in blocks if isinstance(b, dict)]
        elif event.type == "tool.completed":
            call_id = str(data.get("call_id", ""))
            if call_id in order and call_id not in results:
                results[call_id] = str(data.get("output", ""))
        elif event.type == "run.message" and not external:
            flush()  # the round before it ends here: the message follows its results
            messages.append({"role": "user", "content": str(data.get("text", ""))})
        elif event.type == "run.completed":
            reason = str(data.get("reason", "unfinished"))
    flush()
    if messages[-1]["role"] == "user":  # no answer came, to the prompt or to a steering message
        messages.append({"role": "assistant", "content": f"(no answer: the run ended {reason})"})
    return messages


def fold_session(runs: Iterable[Sequence[Event]]) -> list[Message]:
    """The transcript of a session: its runs' messages, in the order given (oldest first)."""
    messages: list[Message] = []
    for events in runs:
        messages.extend(fold_run(events))
    return messages


def transcript_digest(messages: Sequence[Message]) -> str:
    """The sha256 of the messages, canonical JSON (what a run manifest names)."""
    canonical = json.dumps(
        list(messages), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    return hashlib.sha256(canonical.encode()).hexdigest()
