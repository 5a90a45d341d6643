"""The model settings of ``Resolve`` (thinking, reasoning, caching, model lists, prices, cost,
the local model).

A base class of :class:`~jupyter_resolve.config.Resolve`, so each is ``c.Resolve.NAME`` like
every other setting; kept apart so the provider work does not crowd config.py.
"""

from __future__ import annotations

from typing import Any

from traitlets import Dict, Enum, Float, Int, List, Unicode, validate
from traitlets.config import Configurable


class ModelSettings(Configurable):
    """Settings of how the gateway talks to models (part of ``c.Resolve``)."""

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
    completion_max_concurrent = Int(
        4,
        config=True,
        help="Inline completion requests one person may have in flight at once (each goes to "
        "the model provider); one more answers 429 too_many_completions until one ends. A "
        "newer request for the same cell replaces the older, so typing never hits this.",
    )

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

    @validate("completion_max_concurrent")
    def _check_completion_concurrency(self, proposal: dict[str, Any]) -> int:
        value = int(proposal["value"])
        if value < 1:
            raise ValueError(f"Resolve.completion_max_concurrent must be at least 1, not {value}")
        return value

    @validate("max_cost")
    def _check_max_cost(self, proposal: dict[str, Any]) -> float:
        value = float(proposal["value"])
        if value < 0:
            raise ValueError(f"Resolve.max_cost must be 0 (no limit) or positive, not {value}")
        return value
