"""What a peer may use (pure): its granted tools, which of them run code, and the skills the
Agent Card may offer with them (DESIGN 3.8)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from .catalogue import SoulEntry

JUPYTER_OWNER = "jupyter:"
"""Owner prefix of A2A jobs sent with a Jupyter login (a peer id cannot contain ':')."""

TOKEN_OWNER = JUPYTER_OWNER + "token:"
"""The owner of a token-only login's jobs: this prefix and a digest of the token (never the
token itself), so that every client holding that token sees the same tasks."""

SANDBOXED = "sandboxed"


def run_owner(peer: str) -> str | None:
    """Who an A2A job's run belongs to (DESIGN 10.2): the Jupyter user of a login,
    ``peer:<name>`` for a signed peer; none for the server's own token (no person)."""
    if peer.startswith(TOKEN_OWNER):
        return None
    if peer.startswith(JUPYTER_OWNER):
        return peer[len(JUPYTER_OWNER) :]
    return f"peer:{peer}"


def granted_tools(granted: Iterable[str], allowed: Sequence[str]) -> tuple[str, ...]:
    """The granted names the server allows, in the allow list's order (a grant never widens
    ``c.Resolve.allowed_tools``)."""
    wanted = set(granted)
    return tuple(name for name in allowed if name in wanted)


def sandboxed_only(tools: Iterable[str], peer_use: Mapping[str, str]) -> list[str]:
    """The tools a peer may use only under the sandbox (their schemas' ``peer``: the ones that
    run code), a tool of no known schema among them (then assume the worst)."""
    return [name for name in tools if peer_use.get(name, SANDBOXED) == SANDBOXED]


def sandbox_refusal(peer: str, tools: Sequence[str]) -> str:
    return (
        f"peer '{peer}' is granted {', '.join(tools)} (c.Resolve.peer_tools), which run code, "
        "but scratch kernels are not sandboxed (c.Resolve.sandbox): the job was not started. "
        "Set c.Resolve.sandbox = 'bwrap' where bubblewrap works, or take the exec tools out of "
        "c.Resolve.peer_tools."
    )


def soul_needs(soul: SoulEntry, allowed: Sequence[str]) -> list[str]:
    """The tools a soul's run would use on this server (``tools is None``: every allowed one)."""
    if soul.tools is None:
        return list(allowed)
    return [name for name in allowed if name in soul.tools]


def usable_souls(
    souls: Iterable[SoulEntry], granted: Iterable[str], allowed: Sequence[str]
) -> list[SoulEntry]:
    """The souls whose tools are all granted: the only skills a peer is offered."""
    grant = set(granted)
    return [soul for soul in souls if set(soul_needs(soul, allowed)) <= grant]
