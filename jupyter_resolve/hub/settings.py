"""The hub service's settings: :class:`ResolveHub`, a traitlets application.

Configured like JupyterHub's own services: traits of :class:`ResolveHub`, set in a config file
(``--config=path``, by default ``jupyter_resolve_hub_config.py`` in the working directory) or on
the command line (``--ResolveHub.db_url=...``). JupyterHub gives a managed service its name,
URL, prefix and API token in the environment; the upstream keys come from a file the
``*_api_key_file`` settings name (a mounted Kubernetes Secret), else from the variables the
``*_api_key_env`` settings name, which only this process's environment holds. The limits, prices
and keys are read again on SIGHUP, or when the config file or a key file changed
(:meth:`ResolveHub.reload`, ``reload_interval``).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from traitlets import Bool, Dict, Float, Int, Unicode, default
from traitlets.config import Application, Config

from ..contracts.entries import validated
from ..contracts.errors import ResolveError
from ..contracts.prices import Price, price_for, round_cost
from ..providers.prices import load_prices
from .budgets import Used
from .forward import Upstream, Wire
from .limits import Limits, LimitSpec, limits_for, parse_specs, unpriced_models

MIB = 1024 * 1024


class ConfigProblem(ResolveError, ValueError):
    """The service's config cannot be used; the message names the setting."""

    code = "config"


class ResolveHub(Application):
    """Settings of the hub service (``c.ResolveHub.NAME``)."""

    name = "jupyter-resolve-hub"
    description = "Holds the model provider keys for a JupyterHub; per-user budgets and usage."

    config_file = Unicode(
        "jupyter_resolve_hub_config.py",
        config=True,
        help="Python config file read at start (missing: defaults and the command line).",
    )
    aliases = {"config": "ResolveHub.config_file"}  # noqa: RUF012 (traitlets reads it)

    db_url = Unicode(
        "sqlite:///jupyter_resolve_hub.sqlite",
        config=True,
        help="SQLAlchemy URL of the usage database, as JupyterHub's db_url: "
        "sqlite:///path or postgresql://user@host/db.",
    )
    openai_base_url = Unicode(
        "https://api.openai.com/v1",
        config=True,
        help="Where /v1/chat/completions goes: any OpenAI-compatible base URL ending before "
        "/chat/completions (a LiteLLM proxy: http://litellm:4000/v1).",
    )
    openai_api_key_env = Unicode(
        "OPENAI_API_KEY",
        config=True,
        help="Environment variable (of this service) holding the OpenAI-compatible key.",
    )
    openai_api_key_file = Unicode(
        "",
        config=True,
        help="File holding the OpenAI-compatible key (a mounted Kubernetes Secret); when set, "
        "it wins over openai_api_key_env. Read at start, on SIGHUP and when it changes.",
    )
    anthropic_base_url = Unicode(
        "https://api.anthropic.com",
        config=True,
        help="Where /v1/messages goes: an Anthropic-compatible base URL (LiteLLM serves it).",
    )
    anthropic_api_key_env = Unicode(
        "ANTHROPIC_API_KEY",
        config=True,
        help="Environment variable (of this service) holding the Anthropic key.",
    )
    anthropic_api_key_file = Unicode(
        "",
        config=True,
        help="File holding the Anthropic key; when set, it wins over anthropic_api_key_env.",
    )
    max_concurrent = Int(
        4,
        config=True,
        help="Requests one user may have in flight at once, across every replica (counted in "
        "the database); one more is refused with 429. 0: no cap.",
    )
    reserve_max_tokens = Int(
        4096,
        config=True,
        help="The completion tokens reserved against a budget for a request that sets no "
        "max_tokens (with the prompt's estimate); the reservation is settled to the reported "
        "usage when the answer ends.",
    )
    max_body_size = Int(
        8 * MIB,
        config=True,
        help="Largest request body taken, in bytes (larger: 413). The caller's token is checked "
        "before any of the body is read.",
    )
    hangup_read_timeout = Float(
        60.0,
        config=True,
        help="Seconds the service keeps reading an answer whose client hung up, to charge the "
        "usage the upstream reports; past that (or without usage) the reservation is charged.",
    )
    keepalive_interval = Float(
        15.0,
        config=True,
        help="Seconds of upstream silence in a stream after which an SSE comment is sent, so "
        "users' servers can tell a model that thinks from a connection that died (their "
        "c.Resolve.hub_stream_timeout must be longer). 0: none.",
    )
    reload_interval = Float(
        30.0,
        config=True,
        help="Seconds between looks at the config file and the key files: when one changed, "
        "they are read again as on SIGHUP (Kubernetes updates a mounted ConfigMap or Secret "
        "in place and sends no signal). 0: only on SIGHUP.",
    )
    reservation_ttl = Float(
        60.0,
        config=True,
        help="Seconds a reservation lives past its replica's last heartbeat (every third of "
        "it); a replica that died leaves reservations that are then charged in full.",
    )
    db_threads = Int(
        8,
        config=True,
        help="Threads (and pooled connections) for database work, kept off the event loop.",
    )
    upgrade_db = Bool(
        True,
        config=True,
        help="Migrate the usage database to this version's schema at start. Off: a database "
        "not at the newest revision stops the start (run `python -m jupyter_resolve.hub "
        "upgrade-db`).",
    )
    cookie_secret_file = Unicode(
        "",
        config=True,
        help="File holding the secret that signs the admin page's login cookie; with several "
        "replicas give them all the same one (empty: a new secret per process).",
    )
    default_model = Unicode(
        "",
        config=True,
        help="Model used when a request names none (or 'default'); empty: the first allowed.",
    )
    stream_usage = Bool(
        True,
        config=True,
        help="Ask OpenAI-compatible upstreams for usage in streams "
        "(stream_options.include_usage); without it a stream's tokens are not counted.",
    )
    default_limits = Dict(
        config=True,
        help="Limits of every user: {'models': [...], 'day_tokens': N, 'month_tokens': N, "
        "'day_cost': USD, 'month_cost': USD}; a key left out is unlimited.",
    )
    group_limits = Dict(
        config=True,
        help="Limits per JupyterHub group, {group: {...}} as default_limits; a user in several "
        "groups gets the most generous value of each.",
    )
    user_limits = Dict(
        config=True,
        help="Limits per user, {name: {...}} as default_limits; a value here wins.",
    )
    prices = Dict(
        config=True,
        help="USD per million tokens, {model: {input, output}}, over the shipped table; a "
        "model with no price costs 0 (its tokens still count).",
    )
    admin_scope = Unicode(
        "admin:users",
        config=True,
        help="The hub scope whose holders see everyone's usage (/admin, /admin/usage).",
    )
    bind_url = Unicode(
        config=True,
        help="Where to listen (default: $JUPYTERHUB_SERVICE_URL, as JupyterHub sets it).",
    )

    @default("log_level")
    def _default_log_level(self) -> int:
        return logging.INFO  # the start line and one line per request

    @default("bind_url")
    def _default_bind_url(self) -> str:
        return os.environ.get("JUPYTERHUB_SERVICE_URL", "http://127.0.0.1:10101")

    prefix = Unicode(
        config=True,
        help="URL prefix served (default: $JUPYTERHUB_SERVICE_PREFIX, /services/<name>/).",
    )

    @default("prefix")
    def _default_prefix(self) -> str:
        return os.environ.get("JUPYTERHUB_SERVICE_PREFIX", "/services/resolve/")

    def initialize(self, argv: list[str] | None = None) -> None:
        self.parse_command_line(argv)
        if self.extra_args and self.extra_args[0] == "upgrade-db":
            self.subcommand_name = "upgrade-db"
        else:
            self.subcommand_name = ""
        if self.config_file and os.path.exists(self.config_file):
            self.load_config_file(self.config_file)
            self.parse_command_line(argv)  # the command line wins over the file
        self.check()

    def check(self) -> None:
        """Validate the limits and prices and read the keys; ConfigProblem names the setting
        at fault (nothing is changed then)."""
        try:
            default = validated(LimitSpec, self.default_limits, "ResolveHub.default_limits")
            specs = (
                default,
                parse_specs(self.group_limits, "ResolveHub.group_limits"),
                parse_specs(self.user_limits, "ResolveHub.user_limits"),
            )
            prices = load_prices(self.prices)
        except ValueError as exc:
            raise ConfigProblem(str(exc)) from None
        levels = [specs[0], *specs[1].values(), *specs[2].values()]
        missing = unpriced_models(
            levels, self.default_model, lambda m: price_for(m, prices) is not None
        )
        if missing:
            raise ConfigProblem(
                "a cost-only limit (day_cost or month_cost without a token limit) would count "
                f"nothing for these models, which have no price: {', '.join(missing)}; add them "
                "to c.ResolveHub.prices, or set a token limit too"
            )
        keys = {wire: self._read_key(wire) for wire in ("openai", "anthropic")}
        self.specs, self.price_table, self.keys = specs, prices, keys

    def _read_key(self, wire: Wire) -> str | None:
        path = self.openai_api_key_file if wire == "openai" else self.anthropic_api_key_file
        if path:
            try:
                return Path(path).read_text(encoding="utf-8").strip() or None
            except OSError as exc:
                setting = f"ResolveHub.{wire}_api_key_file"
                raise ConfigProblem(f"{setting}: cannot read {path}: {exc.strerror}") from None
        env = self.openai_api_key_env if wire == "openai" else self.anthropic_api_key_env
        return os.environ.get(env) or None

    def key_source(self, wire: Wire) -> str:
        """Where ``wire``'s key comes from, for the start line (never the key)."""
        path = self.openai_api_key_file if wire == "openai" else self.anthropic_api_key_file
        env = self.openai_api_key_env if wire == "openai" else self.anthropic_api_key_env
        where = f"file {path}" if path else f"${env}"
        return f"key from {where}, {'set' if self.keys.get(wire) else 'NOT SET'}"

    def watched_files(self) -> tuple[tuple[str, int, int, int] | None, ...]:
        """The config file's and the key files' identity now (path, inode, mtime, size): it changes
        when one is edited or replaced, as the kubelet replaces a mounted ConfigMap's."""
        seen: list[tuple[str, int, int, int] | None] = []
        for path in (self.config_file, self.openai_api_key_file, self.anthropic_api_key_file):
            try:
                stat = os.stat(path) if path else None
            except OSError:
                stat = None
            seen.append(
                None if stat is None else (path, stat.st_ino, stat.st_mtime_ns, stat.st_size)
            )
        return tuple(seen)

    def reload(self) -> None:
        """Read the config file again (SIGHUP): limits, prices and keys change together, or,
        when the new ones are wrong, not at all (ConfigProblem)."""
        before = {name: getattr(self, name) for name in RELOADED}
        for name in RELOADED:  # an entry taken out of the file goes back to its default
            self.set_trait(name, self.trait_defaults(name))
        self.config = Config()
        if self.config_file and os.path.exists(self.config_file):
            self.load_config_file(self.config_file)
        self.parse_command_line(self.argv)
        try:
            self.check()
        except ConfigProblem:
            for name, value in before.items():
                setattr(self, name, value)
            raise

    def upstream(self, wire: Wire) -> Upstream:
        if wire == "openai":
            return Upstream("openai", self.openai_base_url, self.keys.get("openai"))
        return Upstream("anthropic", self.anthropic_base_url, self.keys.get("anthropic"))

    def limits(self, user: str, groups: list[str]) -> Limits:
        default, by_group, by_user = self.specs
        return limits_for(user, groups, default=default, by_group=by_group, by_user=by_user)

    def model_for(self, requested: str, limits: Limits) -> str:
        """The model a request goes upstream with: its own, else the default."""
        if requested and requested != "default":
            return requested
        if self.default_model:
            return self.default_model
        allowed = sorted(m for m in limits.models or () if m != "*")
        return allowed[0] if allowed else requested

    def price(self, model: str) -> Price | None:
        return price_for(model, self.price_table)

    def upstreams_in_use(self) -> list[Wire]:
        """The upstreams health checks: those with a key, or a base URL set in the config."""
        wires: list[Wire] = []
        for wire, name in (("openai", "openai_base_url"), ("anthropic", "anthropic_base_url")):
            configured = getattr(self, name) != self.trait_defaults(name)
            if self.keys.get(wire) or configured:
                wires.append(wire)  # type: ignore[arg-type]
        return wires

    def cost(self, model: str, used: Used) -> float:
        price = price_for(model, self.price_table)
        if price is None:
            return 0.0
        cost: float = round_cost(
            price, prompt_tokens=used.prompt_tokens, completion_tokens=used.completion_tokens
        )
        return cost


RELOADED = (
    "default_limits",
    "group_limits",
    "user_limits",
    "prices",
    "default_model",
    "openai_api_key_file",
    "anthropic_api_key_file",
    "max_concurrent",
    "reserve_max_tokens",
)
