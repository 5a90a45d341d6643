"""``%resolve runs [--before CURSOR]``: the server's runs, newest first, a page at a time.

``GET /resolve/api/runs`` answers a page and, when older runs remain, ``next``: the ``before``
of the page after it. The table ends with the line that shows that page, so a server with
thousands of runs lists a screenful, never all of them.
"""

from __future__ import annotations

import time
from typing import Any

from IPython.core.error import UsageError

from .client import ResolveClient
from .markdown import show_markdown, table
from .safe_html import code_span

PAGE = 20  # runs a page: a screenful


def wants_listing(args: list[str]) -> bool:
    """Whether ``%resolve runs ARGS`` lists runs (True) or is a prompt that starts with "runs"
    (False); a ``--before`` without one cursor is an error."""
    if not args:
        return True
    if args[0] != "--before":
        return False
    if len(args) != 2:
        raise UsageError(
            "%resolve runs --before CURSOR: --before takes one cursor, the one a page of runs "
            "named after 'Older runs'"
        )
    return True


def _started(value: Any, today: str) -> str:
    try:
        at = time.localtime(float(value or 0))
    except (TypeError, ValueError, OverflowError, OSError):
        at = time.localtime(0)
    same_day = time.strftime("%Y-%m-%d", at) == today
    return time.strftime("%H:%M:%S" if same_day else "%Y-%m-%d %H:%M", at)


def show_runs(client: ResolveClient, session_id: str | None, before: str | None = None) -> None:
    """One page of runs as a table (this kernel's session marked), and how to see older ones."""
    params = {"limit": str(PAGE), **({"before": before} if before else {})}
    answer = client.get_json("resolve/api/runs", **params)
    runs = answer.get("runs", []) if isinstance(answer, dict) else []
    today = time.strftime("%Y-%m-%d")
    rows = []
    for run in runs:
        mine = " ←" if session_id and run.get("session_id") == session_id else ""
        prompt = " ".join(str(run.get("prompt") or "").split())
        rows.append(
            [
                str(run.get("run_id", "")),
                str(run.get("session_id", "")) + mine,
                _started(run.get("started_at"), today),
                str(run.get("reason") or run.get("status", "")),
                prompt if len(prompt) <= 60 else prompt[:59] + "…",
            ]
        )
    notes_md, notes_plain = [], []
    if not rows:
        said = "No older runs." if before else "No runs yet on this server."
        notes_md.append(said)
        notes_plain.append(said)
    if any(row[1].endswith(" ←") for row in rows):
        notes_md.append("← this kernel's session")
        notes_plain.append("← this kernel's session")
    cursor = answer.get("next") if isinstance(answer, dict) else None
    if isinstance(cursor, str) and cursor:
        more = f"%resolve runs --before {cursor}"
        notes_md.append(f"Older runs: {code_span(more)}")
        notes_plain.append(f"Older runs: {more}")
    if isinstance(answer, dict) and answer.get("indexing"):
        note = "The run index is being rebuilt from the logs: older runs may be missing for now."
        notes_md.append(note)
        notes_plain.append(note)
    if rows:
        markdown, plain = table(rows, ["run", "session", "started", "state", "asked"], code=1)
        notes_md.insert(0, markdown)
        notes_plain.insert(0, plain)
    show_markdown("\n\n".join(notes_md), "\n\n".join(notes_plain))
