"""Who gets which service: the gateway's services built once, and handed to each other.

Each service takes what it needs as arguments or as a narrow ``Protocol`` (runs/start.py's
``RunHost``, runs/builtin_tools.py's ``ToolHost``, notebook/tools.py's ``NotebookHost``, the
task manager's ``TaskHost``); the one object that satisfies them is the gateway, which reads
its services at call time (so a test may swap the provider). Nothing here runs a request.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from .config import Resolve
from .mcp.catalog import McpTools
from .notebook.binding import python_binder
from .notebook.proposals import Proposals
from .notebook.tools import NotebookHost, register_notebook_tools
from .providers import make_provider
from .providers.base import Provider
from .providers.model_list import ModelList
from .providers.prices import load_prices
from .runs.builtin_tools import ToolHost, register_builtin_tools
from .runs.inference_notes import InferenceNotes
from .runs.manager import RunManager
from .runs.tasks import TaskHost, TaskManager
from .runs.transcript import SessionTranscripts
from .runtime.supervisor import RuntimeSupervisor
from .scratch import sandbox as scratch_sandbox
from .scratch.pool import ScratchKernels
from .souls import Soul, load_souls
from .tools.catalog import ToolSchema, load_schemas
from .tools.dispatch import ToolDispatcher


class Host(ToolHost, NotebookHost, TaskHost, Protocol):
    """The services' host: what the tools, the notebook tools and tasks call back into, and
    the catalogue a tool call's approval reads its schema from."""

    def schema(self, name: str) -> ToolSchema | None: ...


@dataclass
class Services:
    """A gateway's services (gateway.py reads them from here once)."""

    state_dir: Path
    runtime_token: str
    provider: Provider
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


def wire(host: Host, config: Resolve, *, root_dir: Path, log: logging.Logger) -> Services:
    """Build the services for ``config``; the tools and tasks call back into ``host``. Runs
    and tasks a previous server left live are closed ``interrupted`` (and logged)."""
    state_dir = Path(config.state_dir) if config.state_dir else root_dir / ".resolve"
    runtime_token = RuntimeSupervisor.new_token()
    provider = make_configured_provider(config, log)  # a configuration error stops here, first
    notes = InferenceNotes(load_prices(config.prices))
    kernels = ScratchKernels(
        state_dir / "sessions",
        root_dir,
        log,
        # the effective value, "bwrap" or "" (auto decided here, once); on a gateway, the
        # cluster's isolation applies instead (scratch/remote.py)
        sandbox=scratch_sandbox.effective_sandbox(config.sandbox, log)
        if config.scratch_kernels == "local"
        else "",
        network=config.sandbox_network,
        kernel_name=config.scratch_kernel_name,
        where=config.scratch_kernels,
    )
    tools = ToolDispatcher()
    register_builtin_tools(tools, host, python_binder(host, root_dir))
    register_notebook_tools(tools, host)
    mcp = McpTools(
        config.mcp_servers,
        state_dir=state_dir,
        secret_of=config.env_secret,
        start_timeout=config.mcp_start_timeout,
        log=log,
    )
    supervisor = make_supervisor(config, runtime_token, log)
    runs = RunManager(
        state_dir=state_dir,
        supervisor=supervisor,
        log=log,
        config=config,
        tools=tools,
        schema=host.schema,
        notes=notes,
        protected=lambda: artifact_runs(config, root_dir, state_dir),
    )
    for run_id in runs.mark_interrupted():
        log.warning("run %s was live when the server stopped: marked interrupted", run_id)
    runs.start_upkeep()  # the index brought up to date with the logs, in the background
    tasks = TaskManager(host, state_dir / "tasks", log)
    for task_id in tasks.mark_interrupted():
        log.warning("task %s was live when the server stopped: marked interrupted", task_id)
    souls = load_souls(
        [state_dir / "souls", *(Path(d).expanduser() for d in config.souls_dirs)], log
    )
    return Services(
        state_dir=state_dir,
        runtime_token=runtime_token,
        provider=provider,
        notes=notes,
        model_list=ModelList(config.models_ttl),
        schemas=load_schemas(),
        kernels=kernels,
        proposals=Proposals(),
        tools=tools,
        mcp=mcp,
        supervisor=supervisor,
        runs=runs,
        transcripts=SessionTranscripts(runs),
        tasks=tasks,
        souls=souls,
    )
