"""Whose runs a person may see and decide (DESIGN 10.2; pure).

A run belongs to its ``owner`` (the Jupyter user who started it, ``peer:<name>``, or none: the
server's own). Its events, its session's transcript, its approvals, its cancel, its proposals'
decisions and what is promoted from it are the owner's; anyone who may use ``resolve`` sees and
decides the runs without an owner. Another person's runs need the Authorizer's answer on the
resource :data:`OTHERS`: ``read`` to see them, ``execute`` to decide them (cancel, approve,
accept a proposal) — on a lab server with several identities, an administrator's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .errors import Forbidden, NotFound
from .run_rows import RunRow

OTHERS = "resolve-others"
"""The Authorizer's resource for other people's runs (``read``: see; ``execute``: decide)."""


@dataclass(frozen=True)
class Viewer:
    """Who asks about runs: their user name (None: no person, such as an MCP-scoped token) and
    what the Authorizer lets them do with other people's runs."""

    name: str | None = None
    sees_others: bool = False
    decides_others: bool = False

    @classmethod
    def everyone(cls) -> Viewer:
        """The server's own code: every run."""
        return cls(None, True, True)

    def sees(self, owner: str | None) -> bool:
        """Whether this viewer may see a run (or session) of ``owner``."""
        return owner is None or self.sees_others or owner == self.name

    def decides(self, owner: str | None) -> bool:
        """Whether this viewer may cancel, approve or decide for a run of ``owner``."""
        return owner is None or self.decides_others or owner == self.name

    def check(self, owner: str | None, what: str, deciding: bool = False) -> None:
        """Nothing when this viewer may see (and with ``deciding``, decide for) what ``owner``
        has; else a 404 as for what is not there, or a 403 when they may only see it."""
        if not self.sees(owner):
            raise NotFound(f"no {what} in this server")
        if deciding and not self.decides(owner):
            raise Forbidden(
                f"{what} is another person's: deciding for it needs execute on {OTHERS}",
                code="not_owner",
            )

    def owners(self) -> tuple[str, ...] | None:
        """What a listing keeps beside the runs without an owner: this viewer's own (None:
        every run, for a viewer who sees other people's)."""
        if self.sees_others:
            return None
        return (self.name,) if self.name is not None else ()


def session_owner(rows: Sequence[RunRow]) -> str | None:
    """Whose a session is: its first run's owner (nobody else adds to it: a chat naming
    another person's session is refused where runs start)."""
    return rows[0].owner if rows else None
