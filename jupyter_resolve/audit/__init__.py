"""Audit events (issue 37.4): runs started and ended, tool calls approved or denied, promotions,
proposals decided, emitted on the server's ``EventLogger`` (jupyter_events) with this project's
schemas (``schemas/``, ids under ``https://jupyter-resolve.org/events/``). Ids and counts only,
unless ``c.Resolve.audit_content``. ``records`` makes the events (pure); ``logger`` emits them."""

from __future__ import annotations

import getpass
import os

from .logger import Audit
from .records import PROMOTION, PROPOSAL, RUN, SCHEMA_FILES, TOOL_APPROVAL

__all__ = ["PROMOTION", "PROPOSAL", "RUN", "SCHEMA_FILES", "TOOL_APPROVAL", "Audit", "server_user"]


def server_user() -> str:
    """Whose server this is: the JupyterHub user it was spawned for, else the process's login."""
    try:
        return os.environ.get("JUPYTERHUB_USER") or getpass.getuser()
    except (KeyError, OSError):  # no login name for this uid (a container)
        return str(os.getuid())
