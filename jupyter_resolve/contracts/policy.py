"""Approval policy (pure): may a tool call run, must a person approve it, or is it denied?

``c.Resolve.approval_policy`` maps a tool name or an effect (read, write, exec, network) to
``auto``, ``ask`` or ``deny``. A tool's own name wins over its effect; without either, the
tool's declared default applies (artifacts.promote and network tools ask). A tool whose schema
says ``always_ask`` (promotion: it makes something canonical, and only a person decides that,
DESIGN 3.7) is never run unasked, whatever the policy says; the policy may still deny it.

Both exec tools, ``python`` and ``shell``, default to ``auto``: either can do all the other can
(``python`` runs ``subprocess``), so asking for one only is no protection. What protects the
machine is the sandbox (on by default where bubblewrap works); ``{"exec": "ask"}`` has a person
review every piece of code first.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

Decision = Literal["auto", "ask", "deny"]
DECISIONS = ("auto", "ask", "deny")
EFFECTS = ("read", "write", "exec", "network")


def decide(
    name: str, effect: str, default: str, policy: Mapping[str, str], always_ask: bool = False
) -> Decision:
    decision: Decision = default if default in DECISIONS else "ask"  # type: ignore[assignment]
    for key in (name, effect):
        value = policy.get(key)
        if value in DECISIONS:
            decision = value  # type: ignore[assignment]
            break
    if always_ask and decision == "auto":
        return "ask"
    return decision


def invalid_entries(policy: Mapping[str, str], tool_names: list[str]) -> list[str]:
    """Policy entries that name no tool or effect, or no valid decision."""
    problems = []
    for key, value in policy.items():
        if key not in tool_names and key not in EFFECTS:
            problems.append(f"approval_policy: '{key}' is neither a tool nor an effect")
        if value not in DECISIONS:
            problems.append(f"approval_policy: '{key}': '{value}' is not auto, ask or deny")
    return problems
