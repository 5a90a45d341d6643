"""The ``%resolve`` IPython magics (loaded with ``%load_ext jupyter_resolve``)."""

from __future__ import annotations

from typing import Any


def load_magics(ipython: Any) -> None:
    """Register the magics on ``ipython``."""
    raise NotImplementedError("the %resolve magics are not built yet")
