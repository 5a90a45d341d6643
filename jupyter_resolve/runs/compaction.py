"""Compaction step 2 for one run (DESIGN 9.1): before its first round, the turns that fitting
dropped are summarized by the model, and the summary opens the run's history.

The summary is logged in the run's ``context.compacted`` event with the runs it stands for, so
later runs of the session read it back from the log (runs/transcript.py) instead of asking
again. When the model cannot summarize (an error, a timeout, no text), the run goes on without
the dropped turns, as step 1 left it, and the event says why.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from ..contracts.bodies import AgentChatBody
from ..contracts.compaction import summary_message, summary_request
from ..contracts.context import CHARS_PER_TOKEN, Assembly, message_tokens
from ..contracts.errors import ProviderError
from ..providers.base import Provider
from .run import Run

Prepare = Callable[[Run, AgentChatBody], Awaitable[AgentChatBody]]


async def ask_for_summary(
    provider: Provider, body: dict[str, Any], run_id: str, timeout: float
) -> str:
    """The text of the provider's answer to a summarization request."""

    async def collect() -> str:
        parts: list[str] = []
        async for chunk in provider.stream_chat(body, f"{run_id}.summary"):
            for choice in chunk.get("choices") or ():
                content = (choice.get("delta") or {}).get("content") if choice else None
                if isinstance(content, str):
                    parts.append(content)
        return "".join(parts).strip()

    return await asyncio.wait_for(collect(), timeout)


def summarizing(
    provider: Provider,
    assembly: Assembly,
    *,
    covered_runs: Sequence[str],
    window_budget: int,
    room: int,
    timeout: float,
    ratio: float,
    log: logging.Logger,
) -> Prepare:
    """The step that summarizes ``assembly.dropped`` (standing for ``covered_runs``) and emits
    the run's ``context.compacted``."""

    async def prepare(run: Run, body: AgentChatBody) -> AgentChatBody:
        compacted = dict(assembly.compacted or {})
        # what the elision state counts from (runs/transcript.py): the history as sent,
        # after the transcript's messages left out (none once a summary stands for them)
        compacted["history_messages"] = len(assembly.history)
        compacted["left_out_messages"] = len(assembly.dropped)
        request = summary_request(
            assembly.dropped,
            model=body.model,
            # the request must fit the window as well: its budget less the answer, in chars
            max_chars=int(max(window_budget - room, 256) * CHARS_PER_TOKEN * 0.8),
            max_tokens=room,
        )
        try:
            summary = await ask_for_summary(provider, request, run.run_id, timeout)
            if not summary:
                raise ProviderError("the model answered with no text")
        except Exception as exc:  # the run goes on without the summary, never fails for it
            if isinstance(exc, ProviderError):
                why = exc.message
            elif isinstance(exc, asyncio.TimeoutError):
                why = f"no answer in {timeout:g} s"
            else:
                why = f"{type(exc).__name__}: {exc}"
            log.warning("run %s: the dropped turns were not summarized: %s", run.run_id, why)
            compacted["note"] = f"{compacted.get('note', '')} (no summary: {why})"
            compacted["summary"] = compacted["note"]
            run.emit("context.compacted", compacted)
            return body
        message = summary_message(summary, len(covered_runs))
        compacted.update(
            summary=summary,
            summarized_runs=list(covered_runs),
            summary_sha256=hashlib.sha256(summary.encode()).hexdigest(),
            history_messages=len(assembly.history) + 1,
            left_out_messages=0,
            after_tokens=assembly.after_tokens + message_tokens(message, ratio),
        )
        compacted["note"] = compacted.get("note", "") + f"; {len(covered_runs)} summarized"
        run.emit("context.compacted", compacted)
        return body.model_copy(update={"history": [message, *body.history]})

    return prepare
