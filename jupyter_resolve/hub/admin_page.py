"""The admin page's HTML (pure): a chart of everyone's tokens per day, the top users of the
month, and every user's usage against their limits.

Names come from the hub and model names from users' requests: every piece of text goes through
``html.escape`` (quotes included) before it reaches the page, and the page loads nothing from
anywhere (no script; its style is inline), so nothing a user chose can run in an admin's browser.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

CHART_WIDTH = 720
CHART_HEIGHT = 160
STYLE = (
    "body{font-family:system-ui,sans-serif;margin:2em;color:#222}"
    "table{border-collapse:collapse;margin:1em 0}"
    "td,th{border:1px solid #ccc;padding:.3em .6em;text-align:left}"
    "td.n{text-align:right;font-variant-numeric:tabular-nums}"
    "svg rect{fill:#4c78a8}svg text{font-size:10px;fill:#555}"
)


def _tokens(value: int) -> str:
    return f"{value:,}"


def chart(days: Sequence[tuple[str, int, float]]) -> str:
    """An SVG bar chart of tokens per day (``days``: (YYYY-MM-DD, tokens, cost), oldest
    first)."""
    if not days:
        return "<p>No usage yet.</p>"
    top = max(tokens for _, tokens, _ in days) or 1
    width = CHART_WIDTH / len(days)
    bars = []
    for i, (day, tokens, cost) in enumerate(days):
        height = round((CHART_HEIGHT - 20) * tokens / top, 1)
        x = round(i * width, 1)
        title = escape(f"{day}: {_tokens(tokens)} tokens, ${cost:.4f}")
        bars.append(
            f'<rect x="{x}" y="{CHART_HEIGHT - 14 - height}" width="{max(1.0, width - 2):.1f}" '
            f'height="{height}"><title>{title}</title></rect>'
        )
        if i % max(1, len(days) // 6) == 0:
            bars.append(f'<text x="{x}" y="{CHART_HEIGHT - 2}">{escape(day[5:])}</text>')
    return (
        f'<svg role="img" aria-label="tokens per day" width="{CHART_WIDTH}" '
        f'height="{CHART_HEIGHT}" viewBox="0 0 {CHART_WIDTH} {CHART_HEIGHT}">'
        + "".join(bars)
        + "</svg>"
    )


def _limit(value: Any, unit: str) -> str:
    if value is None:
        return "∞"
    return _tokens(int(value)) if unit == "tokens" else f"${float(value):g}"


def _period(period: dict[str, Any]) -> str:
    tokens = f"{_tokens(int(period['tokens']))} / {_limit(period['limit_tokens'], 'tokens')}"
    cost = f"${float(period['cost']):.4f} / {_limit(period['limit_cost'], 'cost')}"
    return escape(f"{tokens} tokens, {cost}")


def page(
    rows: Sequence[dict[str, Any]],
    days: Sequence[tuple[str, int, float]],
    top: Sequence[tuple[str, int, float]],
    version: str,
    following: int | None = None,
) -> str:
    """The whole page."""
    leaders = "".join(
        f'<tr><td>{escape(name)}</td><td class="n">{_tokens(tokens)}</td>'
        f'<td class="n">${cost:.4f}</td></tr>'
        for name, tokens, cost in top
    )
    users = "".join(
        f"<tr><td>{escape(str(r['user']))}</td><td>{_period(r['day'])}</td>"
        f"<td>{_period(r['month'])}</td></tr>"
        for r in rows
    )
    total = sum(tokens for _, tokens, _ in days)
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        "<title>jupyter-resolve usage</title>"
        f"<style>{STYLE}</style></head><body>"
        "<h1>Usage of the hub's models</h1>"
        f"<h2>Tokens per day (last {len(days)} days, {_tokens(total)} in all)</h2>"
        f"{chart(days)}"
        "<h2>Top users this month</h2>"
        "<table><tr><th>user</th><th>tokens</th><th>cost</th></tr>"
        f"{leaders}</table>"
        "<h2>Every user: used / limit</h2>"
        "<table><tr><th>user</th><th>today</th><th>this month</th></tr>"
        f"{users}</table>"
        + (f'<p><a href="?offset={int(following)}">more users</a></p>' if following else "")
        + f"<p><small>jupyter-resolve hub service {escape(version)}</small></p>"
        "</body></html>"
    )
