"""The one request that starts a run, as every edge builds it: the API and the facade, A2A
jobs, MCP's ``ask``, a task's steps and a delegation (runs/start.py takes it)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..contracts.bodies import ChatRequest
from ..contracts.permissions import RunPermissions


@dataclass(frozen=True)
class RunRequest:
    """A chat, and who starts the run and with which tools.

    ``only_tools`` (not None) caps the run's tools to those names (a peer's grant: empty means
    none, a model-only answer); ``exclude_tools`` takes names out. A run delegated by a peer's
    run never gets a tool its parent did not have.

    ``permissions`` are the caller's, as the edge asked the Authorizer (none unless given: a
    run nobody vouched for reaches neither the server's files nor a user's kernel); a task's
    steps and a delegation carry their starter's, and their ``owner`` too (DESIGN 10.2). A run
    joins only a session of its own owner's, or one without an owner, unless ``others``: the
    server's own code, or a caller the Authorizer lets decide other people's runs."""

    chat: ChatRequest
    peer: str | None = None  # the A2A peer the run works for
    parent: str | None = None  # the run that delegated this one
    owner: str | None = None  # who started it (a Jupyter user name, ``peer:<name>``)
    task_id: str | None = None  # the task whose step this run is (role chain)
    exclude_tools: tuple[str, ...] = ()
    only_tools: tuple[str, ...] | None = None
    permissions: RunPermissions = field(default_factory=RunPermissions)
    others: bool = False
