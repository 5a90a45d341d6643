"""Run budgets (pure): rounds (enforced by the runtime), tool calls, seconds and tokens."""

from __future__ import annotations

from pydantic import BaseModel, Field


class Limits(BaseModel):
    rounds: int = Field(default=8, ge=1, le=64)
    tool_calls: int = Field(default=64, ge=0)
    seconds: float = Field(default=900.0, gt=0)
    tokens: int = Field(default=0, ge=0)  # 0: no limit


def exceeded(limits: Limits, *, tool_calls: int, seconds: float, tokens: int) -> str | None:
    """Which budget the run has used up, as a phrase for the summary; None while within."""
    if tool_calls > limits.tool_calls:
        return f"tool-call budget ({limits.tool_calls} calls)"
    if seconds > limits.seconds:
        return f"time budget ({limits.seconds:g} s)"
    if limits.tokens and tokens > limits.tokens:
        return f"token budget ({limits.tokens} tokens)"
    return None
