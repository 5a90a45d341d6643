"""Widget messages that reach the kernel while the cell that shows them is still running.

ipykernel ≥ 7 runs subshells: a comm whose ``_reply_subshell_for`` names one has the messages
of its frontend handled there, on a thread of its own, instead of waiting for the busy cell.
The live view's Approve and Deny buttons and its steering box use one helper subshell, made on
first use. Elsewhere (an older ipykernel, a terminal) this is a no-op: clicks wait for the cell.
"""

from __future__ import annotations

import threading
from typing import Any

_helper_lock = threading.Lock()
_helper_subshell: list[str | None] = []


def route_while_busy(widgets: list[Any]) -> None:
    """Route the widgets' messages (a click, a typed value) to the helper subshell."""
    subshell = _helper()
    if subshell is None:
        return
    for widget in widgets:
        comm = getattr(widget, "comm", None)
        if comm is not None:
            comm._reply_subshell_for = lambda _data, _default, sid=subshell: sid


def _helper() -> str | None:
    with _helper_lock:
        if not _helper_subshell:
            _helper_subshell.append(_create_subshell())
        return _helper_subshell[0]


def _create_subshell() -> str | None:
    try:
        from ipykernel.kernelbase import Kernel

        if not Kernel.initialized():
            return None
        thread = getattr(Kernel.instance(), "shell_channel_thread", None)
        if thread is None:
            return None
        manager = thread.manager
        created: list[str] = []
        done = threading.Event()

        def create() -> None:
            try:
                created.append(manager._create_subshell())
            finally:
                done.set()

        thread.io_loop.add_callback(create)
        if not done.wait(5):
            return None
        return created[0] if created else None
    except Exception:  # an ipykernel without subshells: clicks wait for the cell
        return None
