"""Steering a run while it works (pure; issue 50, DESIGN 3.6): the message's body, its bounds
and how the gateway checks them.

A person's message to a running run is delivered at the run's next round boundary (after the
tool calls in progress, before the next inference) as a user turn: agent-httpd keeps the
conversation, so it adds the message there and says so with a ``message`` frame, which the
gateway logs as ``run.message`` where it took effect (native/README.md, "The loop").
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from .errors import BadRequest, TooLarge, TooManyRequests

MAX_CHARS = 10_000  # a message's text (a person's instruction, not a document)
MAX_PENDING = 8  # messages posted to one run and not delivered yet (agent-httpd's bound too)
RETRY_AFTER = 5  # seconds: a round boundary comes about that often while a run works


class SteerRequest(BaseModel):
    """``POST /resolve/api/runs/{run_id}/messages`` (and a task's)."""

    model_config = ConfigDict(extra="forbid")

    text: str


def check_message(text: str, pending: int) -> str:
    """The text to deliver (surrounding whitespace dropped), or the error for it: 400 when
    empty, 413 past :data:`MAX_CHARS`, 429 when :data:`MAX_PENDING` wait already."""
    text = text.strip()
    if not text:
        raise BadRequest("text: a message needs some text")
    if len(text) > MAX_CHARS:
        raise TooLarge(
            f"text: {len(text):,} characters is over the {MAX_CHARS:,} a message may have; "
            "attach a file instead",
            code="message_too_large",
        )
    if pending >= MAX_PENDING:
        raise TooManyRequests(
            f"{pending} messages are waiting for this run's next step; send more once they "
            "are delivered",
            retry_after=RETRY_AFTER,
            code="too_many_messages",
        )
    return text
