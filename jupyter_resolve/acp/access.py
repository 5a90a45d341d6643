"""Who may have an external agent (DESIGN 10.1, 10.4): a caller who may read and write the
server's files and run code in kernels, since the agent's own tools (its shell, its file access)
are beyond this server's control. Pure."""

from __future__ import annotations

from ..contracts.permissions import CONTENTS_READ, CONTENTS_WRITE, KERNELS_EXECUTE, RunPermissions

NEEDED = {  # what an external agent's run needs, said as a person would
    CONTENTS_READ: "read the server's files (contents read)",
    CONTENTS_WRITE: "write the server's files (contents write)",
    KERNELS_EXECUTE: "run code in kernels (kernels execute)",
}


def missing(permissions: RunPermissions) -> list[str]:
    """What of :data:`NEEDED` ``permissions`` lack, said as a person would."""
    return [said for name, said in NEEDED.items() if not getattr(permissions, name)]


def agent_refusal(permissions: RunPermissions) -> str | None:
    """Why a caller with ``permissions`` is given no external agent, or None (all three)."""
    lacking = missing(permissions)
    if not lacking:
        return None
    return (
        "an external agent needs permission to read and write the server's files and run "
        "code in kernels (its own tools are beyond this server's control); you may not "
        f"{', '.join(lacking)}. Ask the server's administrator, or chat without 'agent'"
    )
