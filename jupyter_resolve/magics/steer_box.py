"""The live view's steering box (issue 50.2): a text field and a Steer button under a running
``%resolve``. They reach the kernel while the cell that shows them still runs (the helper
subshell, as Approve does: ``subshell.py``); the message goes to the run (a task's to its task)
and reaches the model at its next step, where the run's view then shows it (``run.message``).
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

from .subshell import route_while_busy

Steer = Callable[[str], str | None]  # a message → the error that refused it, or None


class SteerBox:
    """The field, its button and a line saying what became of the last message."""

    def __init__(self, w: Any, steer: Steer) -> None:
        self._steer = steer
        self.text = w.Text(
            placeholder="Steer the running answer… (the agent reads it at its next step)",
            continuous_update=False,  # the value is sent once, when the field is left
            layout=w.Layout(flex="1 1 auto"),
        )
        self.button = w.Button(description="Steer", icon="share")
        self.button.on_click(lambda _b: self.send())
        self.note = w.HTML()
        self.box = w.VBox([w.HBox([self.text, self.button]), self.note])
        route_while_busy([self.text, self.button])

    def send(self) -> None:
        text = self.text.value.strip()
        if not text:
            return
        error = self._steer(text)
        if error:
            self.note.value = f'<span style="color:#c33">not sent: {html.escape(error)}</span>'
            return
        self.text.value = ""
        self.note.value = "<i>queued: the agent reads it at its next step</i>"

    def hide(self) -> None:
        """The run ended: nothing to steer any more."""
        self.box.layout.display = "none"
