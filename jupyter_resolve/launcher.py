"""Starts and cancels runs, whatever drives them: the agent (``runs/start.py``) or an external
agent (``acp/runs.py``). Every edge builds a :class:`RunRequest` and hands it here; runs,
tasks and the builtins' delegation call back into it (``runs/start.py``'s ``RunHost``,
``runs/builtin_tools.py``'s ``ToolHost``, ``runs/tasks.py``'s ``TaskHost``), complete when
they get it: ``wiring.py`` builds it from the services it names."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from .acp.agents import AcpAgents, AgentHost
from .acp.runs import start_agent_run
from .catalogue import Catalogue
from .config import Resolve
from .contracts.bodies import ChatRequest
from .contracts.models import choose_model
from .contracts.permissions import RunPermissions
from .providers.base import Provider
from .runs.manager import RunManager
from .runs.request import RunRequest
from .runs.run import Run
from .runs.start import start_run
from .runs.transcript import SessionTranscripts
from .scratch.pool import ScratchKernels
from .souls import Soul
from .tools.catalog import ToolSchema
from .tools.toolset import ToolSet

if TYPE_CHECKING:
    from .artifacts import Artifacts


class Launcher:
    """What starting a run needs, held once: the settings, the runs, the scratch kernels, the
    session transcripts, the souls, the tool catalogue, the provider (``provider`` may be
    swapped while the server runs: every run start reads it), the artifact store (built on
    first use) and the external agents."""

    def __init__(
        self,
        *,
        config: Resolve,
        root_dir: Path,
        log: logging.Logger,
        souls: dict[str, Soul],
        runs: RunManager,
        kernels: ScratchKernels,
        transcripts: SessionTranscripts,
        catalogue: Catalogue,
        provider: Provider,
        artifacts: Callable[[], Artifacts],
        agents: AcpAgents,
        agent_host: AgentHost,
    ) -> None:
        self.config = config
        self.root_dir = root_dir
        self.log = log
        self.souls = souls
        self.runs = runs
        self.kernels = kernels
        self.transcripts = transcripts
        self.catalogue = catalogue
        self.provider = provider
        self._artifacts = artifacts
        self.agents = agents
        self.agent_host = agent_host

    @property
    def artifacts(self) -> Artifacts:
        return self._artifacts()

    def toolset(self) -> ToolSet:
        return self.catalogue.toolset()

    def schema(self, name: str) -> ToolSchema | None:
        return self.catalogue.schema(name)

    def start_run(self, request: RunRequest) -> Run:
        """Start a run: every edge (API, facade, A2A, MCP, tasks, delegation) builds its
        :class:`RunRequest`; a chat naming an external agent is that agent's run."""
        if request.chat.agent is not None:
            agent = self.agents.get(request.chat.agent)
            return start_agent_run(self.agent_host, agent, request)
        return start_run(self, request)

    def start_chat(self, request: ChatRequest) -> Run:
        """A run for a chat alone, started in process by the server's own code (no person to
        ask the Authorizer about: every permission; no owner either: the server's own run,
        which the audit names as the server's user)."""
        return self.start_run(RunRequest(request, permissions=RunPermissions.full(), others=True))

    async def cancel_run(self, run_id: str) -> Run:
        """Cancel a run and stop its tools (:meth:`RunManager.cancel`): a call running in the
        scratch kernel is interrupted (the shell tool then kills its process group)."""
        return await self.runs.cancel(run_id)

    def check_model(self, model: str | None) -> str:
        """The model a run would use for ``model``; BadRequest when not allowed."""
        return choose_model(model, self.config.allowed_models, self.config.resolved_model())
