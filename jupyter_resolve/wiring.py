"""Who gets which service: the gateway's services built once, bottom up, each given its
collaborators when it is made (DESIGN 1; issue 45.4).

Nothing here takes the gateway: the tool catalogue (``catalogue.py``), the notebook's services,
the external agents and the launcher (``launcher.py``, what every edge hands its
``RunRequest`` to) are complete objects before anything calls into them; the tools and the
tasks are registered with the launcher once it exists (a registry fills after it is made).
Nothing here runs a request.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .acp.agents import AcpAgents
from .admin_policy import AppliedPolicy
from .catalogue import Catalogue
from .config import Resolve
from .launcher import Launcher
from .mcp.catalog import McpTools
from .notebook.binding import python_binder
from .notebook.kernels import UserKernels
from .notebook.proposals import Proposals
from .notebook.tools import register_notebook_tools
from .providers import make_provider
from .providers.base import Provider
from .providers.model_list import ModelList
from .providers.prices import load_prices
from .runs.builtin_tools import register_builtin_tools
from .runs.inference_notes import InferenceNotes
from .runs.manager import RunManager
from .runs.request import RunRequest
from .runs.run import Run
from .runs.tasks import TaskManager
from .runs.transcript import SessionTranscripts
from .runtime.supervisor import RuntimeSupervisor
from .scratch import sandbox as scratch_sandbox
from .scratch.pool import ScratchKernels
from .souls import Soul, load_souls
from .tools.catalog import ToolSchema, load_schemas
from .tools.dispatch import ToolDispatcher

if TYPE_CHECKING:
    from .acp.agents import AgentHost
    from .artifacts import Artifacts
    from .mcp.tools import WorkbenchHost
    from .notebook.tools import NotebookHost
    from .peer.service import PeerHost
    from .runs.builtin_tools import ToolHost
    from .runs.start import RunHost
    from .runs.tasks import TaskHost


@dataclass
class NotebookServices:
    """What the notebook tools use (``notebook/tools.py``'s ``NotebookHost``)."""

    config: Resolve
    runs: RunManager
    kernels: ScratchKernels
    state_dir: Path
    user_kernels: UserKernels | None
    proposals: Proposals


@dataclass(kw_only=True)
class AgentServices(NotebookServices):
    """What the external agents use (``acp/agents.py``'s ``AgentHost``): the notebook's
    services (an agent's notebook write is proposed), the root, the shell tool, the policy."""

    root_dir: Path
    log: logging.Logger
    tools: ToolDispatcher
    policy: AppliedPolicy


class EdgeServices:
    """What the A2A peer endpoint and the MCP server's tools use (``peer/service.py``'s
    ``PeerHost``, ``mcp/tools.py``'s ``WorkbenchHost``), built when the first request needs
    them: the notebook's services, the launcher, the catalogue, and the gateway's start."""

    def __init__(
        self,
        notebook: NotebookServices,
        launcher: Launcher,
        start: Callable[[], Awaitable[None]],
    ) -> None:
        self.config = notebook.config
        self.runs = notebook.runs
        self.kernels = notebook.kernels
        self.state_dir = notebook.state_dir
        self.user_kernels = notebook.user_kernels
        self.proposals = notebook.proposals
        self.root_dir = launcher.root_dir
        self.log = launcher.log
        self.souls = launcher.souls
        self.transcripts = launcher.transcripts
        self._launcher = launcher
        self._start = start

    @property
    def artifacts(self) -> Artifacts:
        return self._launcher.artifacts

    async def start(self) -> None:
        await self._start()

    def start_run(self, request: RunRequest) -> Run:
        return self._launcher.start_run(request)

    def allowed_tools(self) -> list[str]:
        return self._launcher.catalogue.allowed_tools()

    def schema(self, name: str) -> ToolSchema | None:
        return self._launcher.catalogue.schema(name)

    def tool_specs(self) -> list[dict[str, Any]]:
        return self._launcher.catalogue.tool_specs()


@dataclass
class Services:
    """A gateway's services (gateway.py reads them from here once)."""

    state_dir: Path
    runtime_token: str
    notes: InferenceNotes
    model_list: ModelList
    schemas: list[ToolSchema]
    kernels: ScratchKernels
    proposals: Proposals
    tools: ToolDispatcher
    mcp: McpTools
    supervisor: RuntimeSupervisor
    runs: RunManager
    transcripts: SessionTranscripts
    tasks: TaskManager
    souls: dict[str, Soul]
    catalogue: Catalogue
    notebook: NotebookServices
    launcher: Launcher


def souls_dirs(config: Resolve) -> list[Path]:
    """Where the user's souls are (``c.Resolve.souls_dirs``); the project's come first."""
    return [Path(d) for d in config.souls_dirs]


def make_configured_provider(config: Resolve, log: logging.Logger | None = None) -> Provider:
    """The provider ``c.Resolve.provider`` names, built by its registry entry."""
    return make_provider(config, log)


def make_supervisor(config: Resolve, token: str, log: logging.Logger) -> RuntimeSupervisor:
    """agent-httpd's supervisor; its URLs are set when the internal listener binds."""
    return RuntimeSupervisor(
        binary=config.runtime_path,
        inference_url="",
        tools_url="",
        token=token,
        log=log,
        start_timeout=config.runtime_start_timeout,
        max_runs=config.runtime_max_runs,
        health_interval=config.runtime_health_interval,
    )


def artifact_runs(config: Resolve, root_dir: Path, state_dir: Path) -> set[str]:
    """The runs an artifact's provenance names (retention keeps their logs)."""
    from .artifacts.store import ArtifactStore  # only when retention runs (a slow import)

    configured = config.artifacts_dir
    store = ArtifactStore(root_dir / configured if configured else state_dir / "artifacts")
    return {m.agent.run_id for m in store.find() if m.agent is not None}


def scratch_kernels(
    config: Resolve, root_dir: Path, state_dir: Path, log: logging.Logger, server_kernels: Any
) -> ScratchKernels:
    """The sessions' scratch kernels: local (under the sandbox, ``bwrap`` or none: auto is
    decided here, once) or on a Jupyter gateway through ``server_kernels``, where the
    cluster's isolation applies instead (scratch/remote.py)."""
    local = config.scratch_kernels == "local"
    kernels = ScratchKernels(
        state_dir / "sessions",
        root_dir,
        log,
        sandbox=scratch_sandbox.effective_sandbox(config.sandbox, log) if local else "",
        network=config.sandbox_network,
        kernel_name=config.scratch_kernel_name,
        where=config.scratch_kernels,
    )
    kernels.server_kernels = server_kernels
    return kernels


def close_left_live(what: RunManager | TaskManager, log: logging.Logger) -> None:
    """Runs (or tasks) a previous server left live end ``interrupted`` (and are logged)."""
    kind = "run" if isinstance(what, RunManager) else "task"
    for left in what.mark_interrupted():
        log.warning("%s %s was live when the server stopped: marked interrupted", kind, left)


def artifacts_on_demand(
    config: Resolve,
    root_dir: Path,
    state_dir: Path,
    on_promoted: list[Callable[[Any, bool], None]],
    services: NotebookServices | None = None,
) -> Callable[[], Artifacts]:
    """The artifact store and promotion, built on first use: most servers never promote (and
    its models cost a noticeable part of the extension's load). ``services``: their scratch
    kernels replay an artifact's calls for a reproduction, their runs list a session's."""

    @functools.cache
    def artifacts() -> Artifacts:
        from .artifacts import Artifacts, ArtifactStore
        from .tools.replay import Replayer  # reproductions replay calls as runs do

        configured = config.artifacts_dir
        artifacts_dir = root_dir / configured if configured else state_dir / "artifacts"
        return Artifacts(
            ArtifactStore(artifacts_dir),
            root_dir=root_dir,
            sessions_dir=state_dir / "sessions",
            config=config,
            runs_dir=state_dir / "runs",
            on_promoted=on_promoted,
            replay=Replayer(services.kernels, config.tool_timeout, config.max_artifact_bytes)
            if services is not None
            else None,
            session_runs=(lambda s: [r.run_id for r in services.runs.session_rows(s)])
            if services is not None
            else None,
        )

    return artifacts


def make_launcher(
    notebook: NotebookServices,
    *,
    provider: Provider,
    catalogue: Catalogue,
    transcripts: SessionTranscripts,
    souls: dict[str, Soul],
    tools: ToolDispatcher,
    policy: AppliedPolicy,
    artifacts: Callable[[], Artifacts],
    root_dir: Path,
    log: logging.Logger,
) -> Launcher:
    """The launcher, with the external agents it hands a chat naming one to."""
    agent_host = AgentServices(
        **vars(notebook), root_dir=root_dir, log=log, tools=tools, policy=policy
    )
    return Launcher(
        config=notebook.config,
        root_dir=root_dir,
        log=log,
        souls=souls,
        runs=notebook.runs,
        kernels=notebook.kernels,
        transcripts=transcripts,
        catalogue=catalogue,
        provider=provider,
        artifacts=artifacts,
        agents=AcpAgents(notebook.config, agent_host),  # external agents (c.Resolve.acp_agents)
        agent_host=agent_host,
    )


def wire(
    config: Resolve,
    *,
    root_dir: Path,
    log: logging.Logger,
    user_kernels: UserKernels | None = None,
    policy: AppliedPolicy | None = None,
    server_kernels: Any = None,
    on_promoted: list[Callable[[Any, bool], None]] | None = None,
) -> Services:
    """Build the services for ``config``, each with its collaborators (``user_kernels``,
    ``server_kernels``: the server's; ``on_promoted``: called with each promotion)."""
    state_dir = Path(config.state_dir) if config.state_dir else root_dir / ".resolve"
    runtime_token = RuntimeSupervisor.new_token()
    provider = make_configured_provider(config, log)  # a configuration error stops here, first
    notes = InferenceNotes(load_prices(config.prices))
    kernels = scratch_kernels(config, root_dir, state_dir, log, server_kernels)
    tools = ToolDispatcher()
    mcp = McpTools(
        config.mcp_servers,
        state_dir=state_dir,
        secret_of=config.env_secret,
        start_timeout=config.mcp_start_timeout,
        log=log,
    )
    souls = load_souls([state_dir / "souls", *map(Path.expanduser, souls_dirs(config))], log)
    schemas = load_schemas()
    catalogue = Catalogue(config, schemas, tools, mcp, souls)
    supervisor = make_supervisor(config, runtime_token, log)
    runs = RunManager(
        state_dir=state_dir,
        supervisor=supervisor,
        log=log,
        config=config,
        tools=tools,
        schema=catalogue.schema,
        notes=notes,
        protected=lambda: artifact_runs(config, root_dir, state_dir),
    )
    close_left_live(runs, log)
    runs.start_upkeep()  # the index brought up to date with the logs, in the background
    transcripts = SessionTranscripts(runs)
    notebook = NotebookServices(config, runs, kernels, state_dir, user_kernels, Proposals())
    launcher = make_launcher(
        notebook,
        provider=provider,
        catalogue=catalogue,
        transcripts=transcripts,
        souls=souls,
        tools=tools,
        policy=policy or AppliedPolicy(),
        artifacts=artifacts_on_demand(
            config, root_dir, state_dir, [] if on_promoted is None else on_promoted, notebook
        ),
        root_dir=root_dir,
        log=log,
    )
    register_builtin_tools(tools, launcher, python_binder(notebook, root_dir))
    register_notebook_tools(tools, notebook)
    tasks = TaskManager(launcher, state_dir / "tasks", log)
    close_left_live(tasks, log)
    return Services(
        state_dir=state_dir,
        runtime_token=runtime_token,
        notes=notes,
        model_list=ModelList(config.models_ttl),
        schemas=schemas,
        kernels=kernels,
        proposals=notebook.proposals,
        tools=tools,
        mcp=mcp,
        supervisor=supervisor,
        runs=runs,
        transcripts=transcripts,
        tasks=tasks,
        souls=souls,
        catalogue=catalogue,
        notebook=notebook,
        launcher=launcher,
    )


if TYPE_CHECKING:  # mypy checks that each service is what the code it is handed to expects

    def _hosts(
        notebook: NotebookServices, agents: AgentServices, launcher: Launcher, edges: EdgeServices
    ) -> tuple[NotebookHost, AgentHost, RunHost, ToolHost, TaskHost, PeerHost, WorkbenchHost]:
        return notebook, agents, launcher, launcher, launcher, edges, edges
