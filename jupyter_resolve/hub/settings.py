"""The hub service's settings: :class:`ResolveHub`, a traitlets application.

Configured like JupyterHub's own services: traits of :class:`ResolveHub`, set in a config file
(``--config=path``, by default ``jupyter_resolve_hub_config.py`` in the working directory) or on
the command line (``--ResolveHub.db_url=...``). JupyterHub gives a managed service its name,
URL, prefix and API token in the environment; the upstream keys come from the variables the
``*_api_key_env`` settings name, which only this process's environment holds.
"""

from __future__ import annotations

import os

from traitlets import Bool, Dict, Unicode, default
from traitlets.config import Application

from ..contracts.prices import Price, price_for, round_cost
from ..providers.prices import load_prices
from .budgets import Used
from .forward import Upstream, Wire
from .limits import Limits, LimitSpec, limits_for, parse_specs


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
        if self.config_file and os.path.exists(self.config_file):
            self.load_config_file(self.config_file)
            self.parse_command_line(argv)  # the command line wins over the file
        self.specs = (
            LimitSpec.model_validate(self.default_limits),
            parse_specs(self.group_limits, "ResolveHub.group_limits"),
            parse_specs(self.user_limits, "ResolveHub.user_limits"),
        )
        self.price_table: dict[str, Price] = load_prices(self.prices)

    def upstream(self, wire: Wire) -> Upstream:
        if wire == "openai":
            key = os.environ.get(self.openai_api_key_env) or None
            return Upstream("openai", self.openai_base_url, key)
        key = os.environ.get(self.anthropic_api_key_env) or None
        return Upstream("anthropic", self.anthropic_base_url, key)

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

    def cost(self, model: str, used: Used) -> float:
        price = price_for(model, self.price_table)
        if price is None:
            return 0.0
        cost: float = round_cost(
            price, prompt_tokens=used.prompt_tokens, completion_tokens=used.completion_tokens
        )
        return cost
