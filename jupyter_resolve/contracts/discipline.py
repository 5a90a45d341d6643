"""The tool discipline: the system-prompt text that always comes last (pure).

Last, because the most recent instruction is the one models weigh most; it exists because an
agent that calls tools without reading their results, or that guesses a tool it was not given,
leaves the person with nothing to act on.
"""

from __future__ import annotations

import posixpath
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


def notebook_discipline(
    notebook: str, work: str, variables: Sequence[str] = (), *, file_tools: bool = False
) -> str:
    """The discipline's lines for a notebook chat's python (DESIGN 5): it reads beside the
    notebook, read-only, and writes to ``work`` (the absolute path of the session's work/);
    ``variables``: the mentioned ones already in its namespace; ``file_tools``: the run has tools
    that work in the session workspace instead (their schemas' ``file_tool``). Asked only for a
    run offered a tool that runs in the notebook's folder (its schema's ``notebook_folder``)."""
    folder = posixpath.dirname(notebook) or "the server root"
    lines = [
        f"- This chat is about the notebook {notebook}. Your python code runs in its folder "
        f"({folder}): read the person's files by the paths the notebook uses (relative paths as "
        "in the notebook, e.g. pd.read_csv('data.csv') for a file beside it).",
        "- The person's files are read-only to you: write what you make under "
        f"{work}/ (e.g. open('{work}/result.csv', 'w')); a write anywhere else is refused.",
    ]
    if variables:
        names = ", ".join(variables)
        lines.append(
            f"- The variables the person mentioned ({names}) are already defined in your python "
            "namespace, as copies: use them by name; changing them changes nothing in the "
            "person's notebook."
        )
    if file_tools:
        lines.append(
            "- The file tools (read_file, list_dir, ...) work in your workspace (work/ and "
            "context/), not in the notebook's folder: read the person's files with python."
        )
    return "\n".join(lines)
