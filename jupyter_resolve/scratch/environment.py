"""The scratch kernel's environment (DESIGN 5): an allowlist, so code the agent runs can neither
read secrets nor approve its own calls."""

from __future__ import annotations

import os
from pathlib import Path

from .workspace import Workspace

ENV_ALLOWLIST = ("PATH", "LANG", "LC_ALL", "TZ")


def kernel_environment(workspace: Workspace) -> dict[str, str]:
    """The scratch kernel's whole environment: an allowlist, never the server's secrets."""
    env = {k: os.environ[k] for k in ENV_ALLOWLIST if k in os.environ}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    kernel_tools_parent = Path(__file__).resolve().parents[2]
    env.update(
        HOME=str(workspace.home),
        TMPDIR=str(workspace.tmp),
        PYTHONPATH=str(kernel_tools_parent),
        MPLBACKEND="module://matplotlib_inline.backend_inline",
        PYTHONUNBUFFERED="1",
    )
    return env
