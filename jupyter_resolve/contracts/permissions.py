"""What a run's caller may do on the server beyond ``resolve`` (DESIGN 10.1): read and write
``contents``, execute on ``kernels``. Asked of the Authorizer at the run's start, recorded in
``run.started.permissions``, and the run is offered only the tools they allow. Pure."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from pydantic import BaseModel, ConfigDict

CONTENTS_READ = "contents_read"
CONTENTS_WRITE = "contents_write"
KERNELS_EXECUTE = "kernels_execute"

# The Authorizer's (action, resource) behind each permission.
ASKED: dict[str, tuple[str, str]] = {
    CONTENTS_READ: ("read", "contents"),
    CONTENTS_WRITE: ("write", "contents"),
    KERNELS_EXECUTE: ("execute", "kernels"),
}

Needs = Mapping[str, Iterable[str]]
"""Tool name → the permissions its caller needs: each builtin schema's ``needs``
(tools/catalog.py); a tool not named needs none (it works in the session's own folders)."""


class RunPermissions(BaseModel):
    """The caller's answers; all False unless granted (a run nobody vouched for reaches
    neither the server's files nor a user's kernel)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    contents_read: bool = False
    contents_write: bool = False
    kernels_execute: bool = False

    @classmethod
    def full(cls) -> RunPermissions:
        """Everything: the server's own in-process callers (no person behind them)."""
        return cls(contents_read=True, contents_write=True, kernels_execute=True)

    @classmethod
    def for_tools(cls, names: Iterable[str], needs: Needs) -> RunPermissions:
        """What a grant of ``names`` implies (a peer's configured tools)."""
        needed = {need for name in names for need in needs.get(name, ())}
        return cls(**{need: True for need in needed})

    def allows(self, needs: Iterable[str]) -> bool:
        """Whether these permissions include every one of ``needs``."""
        return all(getattr(self, need) for need in needs)

    def within(self, other: RunPermissions) -> RunPermissions:
        """These, capped by ``other`` (a delegated run never has more than its parent)."""
        return RunPermissions(
            contents_read=self.contents_read and other.contents_read,
            contents_write=self.contents_write and other.contents_write,
            kernels_execute=self.kernels_execute and other.kernels_execute,
        )


def permitted(names: Sequence[str], permissions: RunPermissions, needs: Needs) -> list[str]:
    """``names`` without the tools ``permissions`` do not allow, in order."""
    return [n for n in names if permissions.allows(needs.get(n, ()))]
