"""Where a peer's conversations live (pure): in the peer's own namespace of session ids.

A peer names a conversation by its A2A ``contextId``; the session it runs in is
``peer-<peer id>-<contextId>``, so a peer can never create or continue a session under an id a
person uses (issue 31.3). The peer sees its own ``contextId`` back. A name too long for an id
(DESIGN 9.4) is hashed. A Jupyter user's jobs over A2A are that user's: their ``contextId`` is
the session id itself.
"""

from __future__ import annotations

import hashlib

from ..contracts.ids import PEER_SESSION_PREFIX, is_id
from .grants import JUPYTER_OWNER

PREFIX = PEER_SESSION_PREFIX


def _namespace(owner: str) -> str:
    return f"{PREFIX}{owner}-"


def session_for(owner: str, context: str) -> str:
    """The session id of ``owner``'s conversation ``context``."""
    if owner.startswith(JUPYTER_OWNER):
        return context
    named = _namespace(owner) + context
    if is_id(named):
        return named
    digest = hashlib.sha256(f"{owner}\0{context}".encode()).hexdigest()
    hashed = f"{_namespace(owner)}h{digest[:32]}"
    return hashed if is_id(hashed) else f"{PREFIX}h{digest[:40]}"


def context_of(owner: str, session_id: str) -> str:
    """What ``owner`` calls the session ``session_id`` (its ``contextId``): the session id less
    the peer's namespace. Sending that back names the same session again."""
    if owner.startswith(JUPYTER_OWNER):
        return session_id
    return session_id.removeprefix(_namespace(owner))
