"""``%resolve --steer TEXT``: a message to the session's live run (issue 50.2), delivered at its
next step (after the tool call in progress, before the model's next answer) as a user turn.

The live run is the newest of the session (this kernel's, or ``--session ID``'s) that is still
running and is not a delegation; a task's step is steered through its task, which passes the
message to whichever step runs then. The run's view shows the message where it took effect
(``run.message``); this only says it was queued. The live view's steering box posts through
:func:`steerer`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from IPython.core.error import UsageError

from ..contracts.errors import ClientError
from .client import ResolveClient
from .markdown import show_markdown
from .safe_html import code_span
from .view_model import RunView

START_WAIT = 10.0  # seconds a message from the live view waits for the run's id


def steerer(client: ResolveClient, view: RunView) -> Callable[[str], str | None]:
    """What the live view's steering box calls: post to the run the view shows (its task, for
    a task's), the error that refused it or None."""

    def steer(text: str) -> str | None:
        # on the helper subshell's thread: a message typed as the run starts waits for its id
        deadline = time.monotonic() + START_WAIT
        while not (view.task_id or view.run_id) and time.monotonic() < deadline:
            time.sleep(0.05)
        if not (view.task_id or view.run_id):
            return "the run has not started yet; send it again in a moment"
        target = f"tasks/{view.task_id}" if view.task_id else f"runs/{view.run_id}"
        try:
            client.post_json(f"resolve/api/{target}/messages", {"text": text})
        except ClientError as exc:
            return exc.message
        return None

    return steer


def live_run(client: ResolveClient, session_id: str) -> dict[str, Any]:
    """The session's live run that a message would steer (its listing row)."""
    page = client.get_json("resolve/api/runs", session_id=session_id, status="running")
    rows = page.get("runs", []) if isinstance(page, dict) else []
    for row in rows:  # newest first
        if isinstance(row, dict) and not row.get("parent"):
            return row
    raise UsageError(
        f"%resolve --steer: session {session_id} has no run working now; ask a new question "
        "instead (%resolve QUESTION)"
    )


def steer_live_run(client: ResolveClient, session_id: str | None, text: str) -> dict[str, Any]:
    """Post ``text`` to the session's live run; the gateway's answer (``{id, run_id, ...}``)."""
    if not session_id:
        raise UsageError(
            "%resolve --steer: no session in this kernel yet; name one with --session ID"
        )
    if not text.strip():
        raise UsageError("%resolve --steer TEXT: what should the agent do differently?")
    try:
        row = live_run(client, session_id)
        task_id = row.get("task_id")
        target = f"tasks/{task_id}" if task_id else f"runs/{row['run_id']}"
        answer: dict[str, Any] = client.post_json(f"resolve/api/{target}/messages", {"text": text})
    except ClientError as exc:
        raise UsageError(f"%resolve --steer: {exc.message}") from None
    run_id = str(answer.get("task_id") or answer.get("run_id") or "")
    show_markdown(
        f"Queued for {code_span(run_id)}: the agent reads it at its next step.",
        f"Queued for {run_id}: the agent reads it at its next step.",
    )
    return answer
