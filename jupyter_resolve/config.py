"""Every setting of the extension, declared once as traits of ``Resolve``.

Set them as ``c.Resolve.NAME`` in ``jupyter_server_config.py`` or ``--Resolve.NAME=...`` on the
command line. Defaults run fully offline on the scripted model.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from traitlets import Bool, Dict, Enum, Float, Int, List, Unicode, default, validate
from traitlets.config import Configurable

from .config_agents import AgentSettings
from .config_models import ModelSettings
from .config_provenance import ProvenanceSettings
from .providers import registry

if TYPE_CHECKING:

    class ProviderSettings(Configurable): ...

else:  # each installed provider's own settings (providers/registry.py)
    ProviderSettings = registry.settings_base()


class Resolve(ModelSettings, AgentSettings, ProvenanceSettings, ProviderSettings, Configurable):
    """Settings of jupyter-resolve (the gateway, its runtime and its providers; the model
    settings are declared in config_models.py, the external agents' in config_agents.py, each
    provider's by its entry in the jupyter_resolve.providers group)."""

    provider = Unicode(
        registry.DEFAULT,
        config=True,
        help="Model provider, by its name in the jupyter_resolve.providers entry-point group "
        f"(a package adds one). Installed here: {registry.summary()}.",
    )

    @validate("provider")
    def _installed_provider(self, proposal: Any) -> str:
        name = str(proposal["value"])
        registry.spec_of(name)  # a TraitError naming the installed ones
        return name

    model = Unicode(
        "", config=True, help="Model name sent to the provider (empty: the provider's default)."
    )
    base_url = Unicode(
        "",
        config=True,
        help="Provider base URL, e.g. http://127.0.0.1:11434/v1 for Ollama "
        "(empty: the provider's public endpoint).",
    )
    api_key_env = Unicode(
        "",
        config=True,
        help="Name of the environment variable holding the provider key "
        "(empty: OPENAI_API_KEY or ANTHROPIC_API_KEY). The key itself never goes in a file.",
    )
    stream_usage = Bool(
        True,
        config=True,
        help="Ask OpenAI-compatible servers for usage (stream_options.include_usage); "
        "turn off for servers that reject it.",
    )
    provider_timeout = Float(
        120.0, config=True, help="Seconds to wait for the provider before giving up."
    )
    provider_max_retries = Int(
        3, config=True, help="Retries, with backoff, on 429 and 5xx answers from the provider."
    )
    max_rounds = Int(8, config=True, help="Default round budget of a run (inference calls).")
    allowed_tools = List(
        Unicode(),
        default_value=None,
        allow_none=True,
        config=True,
        help="Tools the agent may use (None: the built-in default allow list).",
    )
    tool_timeout = Float(
        60.0, config=True, help="Seconds a tool call may take before the kernel is interrupted."
    )
    scratch_idle_timeout = Float(
        1800.0,
        config=True,
        help="Seconds before an idle scratch kernel is shut down (its work/ stays on disk).",
    )
    allow_private_fetch = Bool(
        False,
        config=True,
        help="Let web_fetch reach private, loopback and link-local addresses.",
    )
    sandbox = Enum(
        ["auto", "bwrap", "none", ""],
        default_value="auto",
        config=True,
        help="Sandbox of scratch kernels: 'bwrap' (bubblewrap: own PID namespace, only the "
        "session workspace writable, home, temporary folders and the server's runtime "
        "directory hidden, no network), 'none' (agent code runs as you), or 'auto' (bwrap "
        "where it works here, else none, logged at start). '' is 'none'.",
    )
    sandbox_network = Bool(
        False, config=True, help="Let sandboxed scratch kernels reach the network."
    )
    scratch_kernel_name = Unicode(
        "python3",
        config=True,
        help="Kernelspec scratch kernels start from (`jupyter kernelspec list`), through "
        "jupyter_client's kernel manager, so its metadata.kernel_provisioner is honoured: any "
        "provisioner, such as gateway_provisioners' Kubernetes or Docker ones. It must run "
        "Python (ipykernel). One whose provisioner is not the local one starts only while "
        "scratch kernels are not sandboxed (c.Resolve.sandbox = 'none'): bubblewrap wraps a "
        "local process, not a kernel somewhere else. A kernelspec that is missing is an "
        "error at the first tool call and in /resolve/api/health.",
    )
    scratch_kernels = Enum(
        ["local", "gateway"],
        default_value="local",
        config=True,
        help="Where the agent's scratch kernels run. 'local': beside this server, started "
        "through jupyter_client from c.Resolve.scratch_kernel_name, under c.Resolve.sandbox. "
        "'gateway': on the Jupyter gateway the server's kernels use (GatewayClient.url), "
        "started through the server's kernel manager, so the agent's Python runs on the "
        "cluster; the tool bridge and the context files travel over the kernel protocol, "
        "work/ is a temporary folder in that kernel, and the isolation is the cluster's "
        "(bubblewrap does not apply). Needs GatewayClient.url; without it scratch kernels are "
        "refused and /resolve/api/health says why.",
    )
    allow_remote_images = Bool(
        False,
        config=True,
        help="Load images that model or tool text points at on other sites (in the panel and "
        "in %resolve). Off: they show as links, since a prompt-injected model could send "
        "data out in an image URL.",
    )
    approval_policy = Dict(
        config=True,
        help="Tool name or effect (read, write, exec, network) → 'auto', 'ask' or 'deny'. "
        "Overrides the defaults: read, write and exec (python and shell alike) auto; "
        "artifacts.promote and network ask. {'exec': 'ask'} reviews code before it runs.",
    )
    approval_timeout = Float(
        300.0, config=True, help="Seconds to wait for a person's decision; then it is a denial."
    )
    notebook_inspect_timeout = Float(
        10.0,
        config=True,
        help="Seconds the inspector may take in a user's notebook kernel (notebook_variables, "
        "inspect_variable, @mentions); then the kernel is interrupted.",
    )
    kernel_url = Unicode(
        "",
        config=True,
        help="The server's URL as the user's kernels reach it, for %resolve (with base_url; "
        "kernels get it as JUPYTER_RESOLVE_URL, on a Jupyter gateway as KERNEL_RESOLVE_URL). "
        "Empty: the server's own address (its loopback when it listens on all addresses), "
        "which kernels on a gateway on other machines cannot reach: set one they can.",
    )

    @validate("kernel_url")
    def _kernel_url_http(self, proposal: Any) -> str:
        value = str(proposal["value"]).strip()
        if value and not value.startswith(("http://", "https://")):
            raise ValueError(f"kernel_url must be an http:// or https:// URL, not {value!r}")
        return value if not value or value.endswith("/") else value + "/"

    snapshot_max_bytes = Int(
        256 * 1024 * 1024,
        config=True,
        help="Largest snapshot_variable copy, in bytes, kept in a session's context/.",
    )
    max_tool_calls = Int(64, config=True, help="Tool calls a run may make.")
    max_seconds = Float(900.0, config=True, help="Seconds a run may take.")
    max_tokens = Int(0, config=True, help="Tokens (from usage) a run may use; 0: no limit.")
    context_tokens = Int(
        0,
        config=True,
        help="The model's context window in tokens, which a session's transcript is fitted to "
        "(old tool outputs elided, then the oldest turns dropped); 0: the default of the model's "
        "family (gpt-4o 128k, gpt-4.1 1M, o* 200k, claude-* 200k, llama* 128k, qwen* 32k, ...), "
        "else 128k.",
    )
    compaction_summaries = Bool(
        True,
        config=True,
        help="Summarize, with the model, the oldest turns a session drops to fit context_tokens "
        "(one short extra request when it happens; the summary is logged and reused by later "
        "runs). False: the dropped turns are simply left out.",
    )
    souls_dirs = List(
        Unicode(),
        config=True,
        help="Extra folders of soul Markdown files (.resolve/souls under the server root is "
        "always read).",
    )
    artifacts_dir = Unicode(
        "",
        config=True,
        help="Where promoted artifacts live (empty: .resolve/artifacts under the server root).",
    )
    max_artifact_bytes = Int(
        50 * 1024 * 1024, config=True, help="Largest output or file that can be promoted."
    )
    peer_secrets = Dict(
        config=True,
        help="A2A peers allowed to call /resolve/peer/invoke: peer id → shared secret. "
        "Empty: the peer endpoint is off.",
    )
    peer_max_jobs = Int(4, config=True, help="Live jobs one peer may have at once.")
    peer_submit_rate = Int(
        30,
        config=True,
        help="Jobs one peer may submit per minute (a sliding window; over it: 429 with "
        "Retry-After). 0: no bound beyond peer_max_jobs.",
    )
    peer_tools = Dict(
        config=True,
        help="Tools a peer's jobs may use: peer id → list of tool names (within allowed_tools). "
        "Default: none, a model-only answer. Exec tools (python, shell, subagents.delegate) "
        "also need the sandbox (c.Resolve.sandbox); without it such a peer's jobs are refused.",
    )
    peer_signature_v1 = Bool(
        False,
        config=True,
        help="Also accept the old peer signature (an unprefixed HMAC over timestamp, nonce and "
        "body, which binds neither method, path, host nor peer id). Off: only 'v2=<hex>'.",
    )
    runtime_path = Unicode(
        "", config=True, help="Path of the agent-httpd binary (empty: the one in the package)."
    )
    runtime_max_runs = Int(
        1024, config=True, help="Runs agent-httpd may have live at once (a thread each)."
    )
    runtime_start_timeout = Float(
        10.0, config=True, help="Seconds the runtime may take to start and answer /healthz."
    )
    runtime_health_interval = Float(
        2.0, config=True, help="Seconds between health checks of the runtime."
    )
    keepalive_interval = Float(
        15.0, config=True, help="Seconds between SSE keep-alive comments on idle streams."
    )
    state_dir = Unicode(
        "",
        config=True,
        help="Where run logs and sessions live (empty: .resolve under the server root).",
    )
    run_retention_days = Float(
        0.0,
        config=True,
        help="Delete the logs (and index rows) of runs that ended more than this many days ago, "
        "at start and once a day after. A log an artifact's provenance names is always kept; "
        "each pass says in the server's log what it deleted. 0: keep every run.",
    )

    @validate("run_retention_days")
    def _retention_not_negative(self, proposal: Any) -> float:
        value = float(proposal["value"])
        if value < 0:
            raise ValueError(f"run_retention_days must be 0 (keep all) or more, not {value}")
        return value

    freeze_startup_objects = Bool(
        True,
        config=True,
        help="Once the server has started, collect garbage once and move every object left out "
        "of the garbage collector's view (gc.freeze). The server's start leaves some 200,000 "
        "objects (with JupyterLab) that every full collection would walk, pausing the event "
        "loop, and every stream on it, for about 0.1 s on a small machine. Reference counting "
        "still frees them; only a reference cycle among them dropped later would stay in "
        "memory. The freeze is the process's and is never undone, so it happens once per "
        "process, and only in a server's real start (`jupyter server`, `jupyter lab`: a server "
        "with its own HTTP listener), never in a server a test or another program makes in its "
        "own process. False leaves Python's collector as it is.",
    )

    mcp_servers = Dict(
        config=True,
        help="MCP servers whose tools the agent may use, as mcp.<server>.<tool> (ask before each "
        "call unless approval_policy says otherwise): name → {'command': [program, args...], "
        "'env': {NAME: value}} for a stdio server, or {'url': 'https://...', 'headers_env': "
        "{header: ENV_VAR}} for a streamable HTTP one. env values and the variables headers_env "
        "names reach only that server. Needs the 'mcp' extra.",
    )
    mcp_start_timeout = Float(
        30.0, config=True, help="Seconds an MCP server may take to start and list its tools."
    )
    audit_content = Bool(
        False,
        config=True,
        help="Put prompt and output text in the audit events (jupyter_events, sent to the "
        "handlers of c.EventLogger.handlers): a run's prompt and answer, a tool call's "
        "arguments, an artifact's title and note, a proposal's reason. Off: ids and counts only.",
    )

    _keys: dict[str, str | None]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._keys = {}

    @default("context_tokens")
    def _default_context_tokens(self) -> int:
        # a provider may say its window (the local model's server's, which the gateway sets)
        window = registry.spec_of(self.provider).context_tokens
        return window(self) if window is not None else 0

    @default("runtime_path")
    def _default_runtime_path(self) -> str:
        return str(Path(__file__).parent / "bin" / "agent-httpd")

    @validate("context_tokens")
    def _check_context_tokens(self, proposal: dict[str, Any]) -> int:
        value = int(proposal["value"])
        if value != 0 and not 1_024 <= value <= 10_000_000:
            raise ValueError(
                f"Resolve.context_tokens must be 0 or between 1024 and 10000000, not {value}"
            )
        return value

    @validate("max_rounds")
    def _check_rounds(self, proposal: dict[str, Any]) -> int:
        value = int(proposal["value"])
        if not 1 <= value <= 64:
            raise ValueError(f"Resolve.max_rounds must be between 1 and 64, not {value}")
        return value

    @validate("peer_secrets")
    def _check_peer_secrets(self, proposal: dict[str, Any]) -> dict[str, str]:
        from .contracts.ids import id_problem  # pydantic, only when set

        value = dict(proposal["value"])
        for peer, secret in value.items():
            problem = id_problem("Resolve.peer_secrets: a peer id", peer)
            if problem:
                raise ValueError(problem)
            if not isinstance(secret, str) or not secret:
                # never echo the value: it is a secret
                raise ValueError(f"Resolve.peer_secrets['{peer}'] must be a non-empty string")
        return value

    @validate("peer_tools")
    def _check_peer_tools(self, proposal: dict[str, Any]) -> dict[str, list[str]]:
        from .contracts.ids import id_problem  # pydantic, only when set

        value = dict(proposal["value"])
        for peer, tools in value.items():
            problem = id_problem("Resolve.peer_tools: a peer id", peer)
            if problem:
                raise ValueError(problem)
            if not isinstance(tools, (list, tuple)) or not all(isinstance(t, str) for t in tools):
                raise ValueError(f"Resolve.peer_tools['{peer}'] must be a list of tool names")
        return {peer: list(tools) for peer, tools in value.items()}

    @validate("mcp_servers")
    def _check_mcp_servers(self, proposal: dict[str, Any]) -> dict[str, Any]:
        from .contracts.mcp_servers import parse_servers

        value = dict(proposal["value"])
        parse_servers(value)  # a ValueError names the server and field, never a value
        return value

    def resolved_model(self) -> str:
        return self.model or registry.spec_of(self.provider).default_model

    def resolved_base_url(self) -> str:
        return self.base_url or registry.spec_of(self.provider).default_base_url

    def resolved_key_env(self) -> str:
        return self.api_key_env or registry.spec_of(self.provider).default_key_env

    def provider_key(self) -> str | None:
        """The provider key, read from the environment variable named by ``api_key_env``.

        The one place that reads a secret from the environment.
        """
        name = self.resolved_key_env()
        if not name:
            return None
        if name not in self._keys:
            # Taken out of the server's environment once read, so the kernels and terminals
            # the server starts (which inherit it) never see the key: it reaches the gateway.
            self._keys[name] = os.environ.pop(name, None) or None
        return self._keys[name]

    def env_secret(self, name: str) -> str | None:
        """The value of the environment variable ``name`` (an MCP server's header secret), taken
        out of the server's environment like the provider key, so kernels never inherit it."""
        if name not in self._keys:
            self._keys[name] = os.environ.pop(name, None) or None
        return self._keys[name]
