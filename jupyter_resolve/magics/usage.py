"""``%resolve usage``: the user's own usage and budgets, as ``GET /resolve/api/usage`` answers
(from the organization's hub service when ``c.Resolve.provider = "hub"``)."""

from __future__ import annotations

from typing import Any

from .client import ResolveClient
from .markdown import show_markdown, table


def period_row(label: str, period: dict[str, Any]) -> list[str]:
    limit_tokens, limit_cost = period.get("limit_tokens"), period.get("limit_cost")
    tokens = f"{period.get('tokens', 0)} of {limit_tokens if limit_tokens is not None else '∞'}"
    cost = f"${float(period.get('cost') or 0):.4f}"
    cost += f" of ${float(limit_cost):g}" if limit_cost is not None else " of ∞"
    return [label, tokens, cost, str(period.get("resets_at", ""))]


def show_usage(client: ResolveClient) -> dict[str, Any]:
    """Show the usage and return the answer (kept as ``_resolve_usage``)."""
    answer: dict[str, Any] = client.get_json("resolve/api/usage")
    if answer.get("day") is None:
        provider = answer.get("provider", "?")
        show_markdown(
            f"Usage is counted by the organization's hub service; this server's provider is "
            f"`{provider}`, not `hub`."
        )
        return answer
    rows = [period_row(p, answer[p]) for p in ("day", "month") if isinstance(answer.get(p), dict)]
    markdown, plain = table(rows, ["period", "tokens", "cost", "resets at"])
    intro = f"Usage of {answer.get('user')} on this hub"
    show_markdown(f"**{intro}**\n\n{markdown}", f"{intro}\n\n{plain}")
    return answer
