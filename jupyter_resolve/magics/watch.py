"""An interrupted ``%resolve`` cell: the run is cancelled on the gateway, what it still sends is
folded into the view, and the cell ends with one line instead of a traceback.

The cell still ends in an error (a :class:`KeyboardInterrupt`), so that "run all" stops there as
it does for any interrupted cell; IPython shows an exception's ``_render_traceback_`` lines in
place of its traceback.
"""

from __future__ import annotations

import time
from typing import Any

from ..contracts.errors import ClientError
from .client import ResolveClient
from .view_model import RunView

DRAIN_SECONDS = 15.0


class RunInterrupted(KeyboardInterrupt):
    """A ``%resolve`` cell interrupted by the person; shown as its one-line note."""

    def __init__(self, note: str) -> None:
        super().__init__(note)
        self.note = note

    def _render_traceback_(self) -> list[str]:
        return [self.note]


def cancel_and_drain(client: ResolveClient, view: RunView, ui: Any) -> None:
    """Cancel the run (or task) on the gateway and show what it sends until it ends (at most
    ``DRAIN_SECONDS``); a failed cancel is noted in ``view.errors``."""
    if not view.run_id and not view.task_id:
        return
    try:
        after = max((int(e.get("seq") or 0) for e in view.events), default=0)
        if view.task_id:
            client.post_json(f"resolve/api/tasks/{view.task_id}/cancel")
            rest = client.stream("GET", f"resolve/api/tasks/{view.task_id}/events?after={after}")
        else:
            client.cancel(view.run_id)
            rest = client.events(view.run_id, after=after)
        deadline = time.monotonic() + DRAIN_SECONDS
        for event in rest:
            part, key = view.apply(event)
            ui.update(view, part, key)
            if view.completed or time.monotonic() > deadline:
                break
    except ClientError as exc:
        view.errors.append(f"cancel: {exc.message}")


def interrupted_note(view: RunView, *, live: bool) -> str:
    """The one line an interrupted cell shows: what became of its run."""
    run = view.task_id or view.run_id
    if not run:
        return (
            "Interrupted before the run's first event: if it started, %resolve runs lists it "
            "and %resolve cancel RUN stops it."
        )
    if not live:
        return f"Interrupted the replay of {run}."
    failed = [e for e in view.errors if e.startswith("cancel: ")]
    if failed:
        return (
            f"Interrupted, but cancelling {run} failed ({failed[-1].removeprefix('cancel: ')}); "
            f"%resolve cancel {run} tries again."
        )
    if view.reason == "cancelled":
        return f"Interrupted: {run} was cancelled on the server; what it did is in _resolve."
    if view.reason:
        return f"Interrupted: {run} had already ended ({view.reason}); its result is in _resolve."
    return f"Interrupted: cancel sent for {run}, which had not ended yet ({DRAIN_SECONDS:.0f} s)."
