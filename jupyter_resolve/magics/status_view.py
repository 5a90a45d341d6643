"""``%resolve status``: the server's health as this kernel sees it (not ok while the provider
does not answer, its line saying why and the setting to change)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .client import ResolveClient
from .markdown import show_markdown
from .safe_html import escape_markdown


def provider_trouble(provider: dict[str, Any]) -> str:
    """What health says is wrong with the provider, with the setting to change; '' if nothing."""
    error = provider.get("error")
    if not error:
        return ""
    setting = f" ({provider['setting']})" if provider.get("setting") else ""
    return f" — {error}{setting}"


def show_status(client: ResolveClient, session_id: str | None, last_run_id: str | None) -> None:
    health = client.get_json("resolve/api/health")
    runtime = health.get("runtime", {})
    provider = health.get("provider", {})
    session = session_id or "(none yet)"
    last = last_run_id or "(none yet)"
    # health's ok is about the runtime and the tools; a provider that does not answer is
    # not ok either, to the person asking
    working = health.get("ok") and provider.get("reachable") is not False

    def lines(e: Callable[[str], str]) -> str:
        # e escapes the server's text for Markdown (a drift line may name an MCP tool)
        out = [
            f"**jupyter-resolve** {e(str(health.get('version', '')))} at "
            f"{e(client.connection.url)} — " + ("ok" if working else "**not ok**"),
            f"- runtime: {e(str(runtime.get('state', '?')))}",
            f"- provider: {e(str(provider.get('name', '?')))} "
            f"({e(str(provider.get('model', '')))}){e(provider_trouble(provider))}",
            f"- live runs: {e(str(health.get('runs', {}).get('live', 0)))}",
            f"- this kernel's session: {e(session)}; last run: {e(last)}",
        ]
        if health.get("drift"):
            out.append(f"- tool-list drift: {e('; '.join(map(str, health['drift'])))}")
        return "\n".join(out)

    show_markdown(lines(escape_markdown), lines(str))
