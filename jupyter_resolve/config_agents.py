"""The external-agent settings of ``Resolve`` (DESIGN 10.4: agents spoken to over ACP).

A base class of :class:`~jupyter_resolve.config.Resolve`, so each is ``c.Resolve.NAME`` like
every other setting; kept apart, as the model settings are, so config.py stays readable.
"""

from __future__ import annotations

from typing import Any

from traitlets import Bool, Dict, Float, validate
from traitlets.config import Configurable


class AgentSettings(Configurable):
    """Settings of the external agents a chat may name (part of ``c.Resolve``)."""

    acp_agents = Dict(
        config=True,
        help="External agents a chat may name as its 'agent' (Agent Client Protocol over stdio): "
        "name → {'command': [program, args...], 'env': {NAME: value}, 'description': '...'}. "
        "Each is started on first use, and again after it stops; env values reach only that "
        "agent's process. Its reads and writes of files go through the server's contents "
        "manager, within the server root and the caller's permissions; its own tools (its "
        "shell, its network) are outside this server's control. Needs the 'acp' extra.",
    )
    acp_terminal = Bool(
        False,
        config=True,
        help="Let external agents run commands through ACP's terminal/* methods: each command "
        "runs as the shell tool does, in the session's scratch kernel and workspace (under "
        "c.Resolve.sandbox). Off: terminal/* is declined and agents are told there is no "
        "terminal.",
    )
    acp_start_timeout = Float(
        30.0,
        config=True,
        help="Seconds an external agent may take to start and answer ACP's initialize.",
    )

    @validate("acp_agents")
    def _check_acp_agents(self, proposal: dict[str, Any]) -> dict[str, Any]:
        from .contracts.acp_agents import parse_agents  # pydantic, only when set

        value = dict(proposal["value"])
        parse_agents(value)  # a ValueError names the agent and field, never a value
        return value
