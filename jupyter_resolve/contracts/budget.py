"""Run budgets (pure): rounds (enforced by the runtime), tool calls, seconds, tokens and cost."""

from __future__ import annotations

from pydantic import BaseModel, Field


class Limits(BaseModel):
    rounds: int = Field(default=8, ge=1, le=64)
    tool_calls: int = Field(default=64, ge=0)
    seconds: float = Field(default=900.0, gt=0)
    tokens: int = Field(default=0, ge=0)  # 0: no limit
    cost: float = Field(default=0.0, ge=0)  # USD from known prices; 0: no limit


def phrase(limits: Limits, which: str) -> str:
    """The budget ``which`` (``tool_calls``, ``time``, ``tokens``) as a phrase for the summary;
    another word as itself."""
    phrases = {
        "tool_calls": f"tool-call budget ({limits.tool_calls} calls)",
        "time": f"time budget ({limits.seconds:g} s)",
        "tokens": f"token budget ({limits.tokens} tokens)",
        "cost": f"cost budget (${limits.cost:g})",
    }
    return phrases.get(which, which)


def exceeded(
    limits: Limits, *, tool_calls: int, seconds: float, tokens: int, cost: float = 0.0
) -> str | None:
    """Which budget the run has used up, as a phrase for the summary; None while within."""
    if tool_calls > limits.tool_calls:
        return phrase(limits, "tool_calls")
    if seconds > limits.seconds:
        return phrase(limits, "time")
    if limits.tokens and tokens > limits.tokens:
        return phrase(limits, "tokens")
    if limits.cost and cost > limits.cost:
        return phrase(limits, "cost")
    return None
