"""Watching a run from a cell: its events read on a thread of their own, with ticks in quiet
spells; and an interrupted cell, whose run is cancelled on the gateway, what it still sends
folded into the view, the cell ending with one line instead of a traceback.

The interrupted cell still ends in an error (a :class:`KeyboardInterrupt`), so that "run all"
stops there as it does for any interrupted cell; IPython shows an exception's
``_render_traceback_`` lines in place of its traceback.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..contracts.errors import ClientError
from .client import Event, ResolveClient
from .view_model import RunView

DRAIN_SECONDS = 15.0
TICK_SECONDS = 0.1  # a quiet spell this long gets a tick


@dataclass
class _Failed:
    error: Exception


_END = object()


class Ticking:
    """The events of a stream, read on a thread of their own; iterating yields each event, and
    None whenever ``interval`` passes without one. The view then sends what its throttle held
    back: without that, the end of a burst of text stayed hidden for as long as the run was
    quiet (a model writing a long tool call sends nothing until the call is whole). Everything
    that touches the view stays on the cell's thread; errors of the stream are raised there."""

    def __init__(self, events: Iterator[Event], interval: float = TICK_SECONDS) -> None:
        self._events = events
        self._interval = interval
        self._queue: queue.Queue[object] = queue.Queue()
        self._stop = threading.Event()

    def _read(self) -> None:
        try:
            for event in self._events:
                self._queue.put(event)
                if self._stop.is_set():
                    break
        except Exception as exc:  # raised again on the cell's thread
            self._queue.put(_Failed(exc))
        finally:
            close = getattr(self._events, "close", None)
            if close is not None:
                close()
            self._queue.put(_END)

    def __iter__(self) -> Iterator[Event | None]:
        threading.Thread(target=self._read, name="resolve-events", daemon=True).start()
        while True:
            try:
                item = self._queue.get(timeout=self._interval)
            except queue.Empty:
                yield None
                continue
            if item is _END:
                return
            if isinstance(item, _Failed):
                raise item.error
            assert isinstance(item, dict)
            yield item

    def close(self) -> None:
        """Stop reading at the stream's next event or end (a blocked read cannot be cut short;
        after a cancel the run's stream ends soon)."""
        self._stop.set()


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
