"""Keep the server's start out of every full garbage collection.

A Jupyter server with JupyterLab has some 200,000 objects tracked by Python's garbage collector
once it has started: modules, classes, schemas, settings. They live as long as the process, yet
every full collection walks them all, a pause of the event loop of about 0.13 s on a 2-core VM,
in the middle of whatever streams then (a burst of chats saw it as a 130 ms jump of its median
first token). Collected once and frozen (``gc.freeze``), they are left out of later
collections, which then look only at what came after. Reference counting still frees a frozen
object; only a reference cycle among them dropped later stays in memory.

The freeze is the process's, not a server's, and is never undone: it happens once per process,
and only in a server's real start (``jupyter server``, ``jupyter lab``: a server that serves its
own HTTP listener), never in one a test or another program made in its own process, whose
objects are not the process's for good. ``c.Resolve.freeze_startup_objects``.
"""

from __future__ import annotations

import gc
import logging
import time
from typing import Any

_frozen_in_this_process = False


def is_real_start(serverapp: Any) -> bool:
    """Whether ``serverapp`` is a server started as a program, with a listener of its own
    (in-process test servers, pytest-jupyter's among them, are served from the test's)."""
    return getattr(serverapp, "http_server", None) is not None


def freeze_startup_objects(log: logging.Logger) -> int:
    """Collect once, then move every object left out of the collector's view; how many.
    Only the first call of the process freezes (0 after)."""
    global _frozen_in_this_process
    if _frozen_in_this_process:
        return 0
    _frozen_in_this_process = True
    began = time.perf_counter()
    gc.collect()
    gc.freeze()
    frozen = gc.get_freeze_count()
    log.info(
        "jupyter-resolve: the %d objects of the server's start are out of the garbage "
        "collector's view (gc.freeze, %.0f ms; c.Resolve.freeze_startup_objects)",
        frozen,
        (time.perf_counter() - began) * 1e3,
    )
    return frozen
