"""The tool discipline: the system-prompt text that always comes last (pure).

Last, because the most recent instruction is the one models weigh most; it exists because an
agent that calls tools without reading their results, or that guesses a tool it was not given,
leaves the person with nothing to act on.
"""

from __future__ import annotations

from collections.abc import Sequence


def tool_discipline(tool_names: Sequence[str]) -> str:
    """The discipline text for a run that may use ``tool_names``."""
    if tool_names:
        listing = ", ".join(sorted(tool_names))
        tools_line = f"You may call only these tools: {listing}. No other tool exists for you."
    else:
        tools_line = "You have no tools in this run: answer from what you know and what you read."
    return "\n".join(
        [
            "Tool discipline:",
            f"- {tools_line}",
            "- Call a tool only when its result changes your answer; read every result before "
            "the next step.",
            "- If a tool fails, say which one and why, and change the arguments or approach "
            "instead of repeating the same call.",
            "- Work in your scratch workspace; nothing you make is canonical until a person "
            "promotes it.",
            "- End with a plain answer for the person: what you found, what you ran, what is "
            "left uncertain.",
        ]
    )
