"""Model families on the OpenAI wire (pure): which request parameters a model takes.

Reasoning models (OpenAI's o1, o3, o4 and gpt-5 lines) take ``max_completion_tokens`` instead of
``max_tokens``, the ``developer`` role instead of ``system`` and a ``reasoning_effort``, and
refuse the sampling parameters. Claude behind an OpenAI-compatible proxy (LiteLLM) takes its
``thinking_blocks`` back on assistant messages. A family with ``cache_prompt`` (a model a
llama.cpp server serves) gets ``cache_prompt: true``: the server keeps the prompt's KV cache and
reads only what a prompt adds to the last one (contracts/context.py keeps each prompt an
extension of the one before). Every other model gets the request as it is.
Whatever the family, reasoning text (``reasoning_content``, ``reasoning``) is never sent back
in history: DeepSeek answers 400 when it is; an assistant turn's ``content: null`` (a turn that
only called tools) goes as ``""``: llama.cpp's server answers 500 to null.

The table is small on purpose; ``c.Resolve.model_families`` adds to it or replaces an entry
(:func:`parse_families`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

SAMPLING = (
    "temperature",
    "top_p",
    "presence_penalty",
    "frequency_penalty",
    "logprobs",
    "top_logprobs",
    "logit_bias",
)
HISTORY_REASONING = ("reasoning_content", "reasoning")


@dataclass(frozen=True)
class Family:
    """How to shape a request for the models whose name starts with one of ``prefixes``
    (compared without case, with or without a router's ``vendor/`` prefix)."""

    prefixes: tuple[str, ...]
    max_tokens_param: str = "max_tokens"
    system_role: str = "system"
    reasoning_effort: bool = False
    drop: tuple[str, ...] = ()
    thinking_blocks: bool = False
    cache_prompt: bool = False  # llama.cpp's server: reuse the KV cache of the common prefix


BUILT_IN: dict[str, Family] = {
    "openai-reasoning": Family(
        prefixes=("o1", "o3", "o4", "gpt-5"),
        max_tokens_param="max_completion_tokens",
        system_role="developer",
        reasoning_effort=True,
        drop=SAMPLING,
    ),
    "claude": Family(prefixes=("claude", "anthropic/"), thinking_blocks=True),
}
PLAIN = Family(prefixes=())


def parse_families(raw: Mapping[str, Any]) -> dict[str, Family]:
    """``c.Resolve.model_families`` as families; ValueError names what is wrong."""
    known = {f.name for f in fields(Family)}
    out: dict[str, Family] = {}
    for name, entry in raw.items():
        where = f"Resolve.model_families[{name!r}]"
        if not isinstance(entry, Mapping):
            raise ValueError(f"{where} must be a dict of settings")
        unknown = set(entry) - known
        if unknown:
            raise ValueError(f"{where}: unknown setting(s) {', '.join(sorted(unknown))}")
        prefixes = entry.get("prefixes")
        if not isinstance(prefixes, (list, tuple)) or not all(
            isinstance(p, str) and p for p in prefixes
        ):
            raise ValueError(f"{where}: 'prefixes' must be a list of model-name prefixes")
        drop = entry.get("drop", ())
        if not isinstance(drop, (list, tuple)) or not all(isinstance(d, str) for d in drop):
            raise ValueError(f"{where}: 'drop' must be a list of parameter names")
        if entry.get("max_tokens_param", "max_tokens") not in (
            "max_tokens",
            "max_completion_tokens",
        ):
            raise ValueError(f"{where}: 'max_tokens_param' is max_tokens or max_completion_tokens")
        if entry.get("system_role", "system") not in ("system", "developer"):
            raise ValueError(f"{where}: 'system_role' is system or developer")
        out[name] = Family(
            prefixes=tuple(p.lower() for p in prefixes),
            max_tokens_param=str(entry.get("max_tokens_param", "max_tokens")),
            system_role=str(entry.get("system_role", "system")),
            reasoning_effort=bool(entry.get("reasoning_effort", False)),
            drop=tuple(drop),
            thinking_blocks=bool(entry.get("thinking_blocks", False)),
            cache_prompt=bool(entry.get("cache_prompt", False)),
        )
    return out


def family_of(model: str, extra: Mapping[str, Family] | None = None) -> Family:
    """The family of ``model``: the admin's entries first, then the built-in table; the
    longest matching prefix wins."""
    name = model.lower()
    bare = name.rsplit("/", 1)[-1]
    best: tuple[int, Family] | None = None
    for table in (dict(extra or {}), BUILT_IN):
        for family in table.values():
            for prefix in family.prefixes:
                if (name.startswith(prefix) or bare.startswith(prefix)) and (
                    best is None or len(prefix) > best[0]
                ):
                    best = (len(prefix), family)
        if best is not None:
            return best[1]
    return PLAIN


def shape_request(
    payload: dict[str, Any], family: Family, *, reasoning_effort: str = ""
) -> dict[str, Any]:
    """A copy of ``payload`` shaped for ``family`` (see the module's docstring)."""
    out = dict(payload)
    limit = out.pop("max_tokens", None) if family.max_tokens_param != "max_tokens" else None
    if limit is not None and out.get(family.max_tokens_param) is None:
        out[family.max_tokens_param] = limit
    for key in family.drop:
        out.pop(key, None)
    if family.reasoning_effort and reasoning_effort:
        out["reasoning_effort"] = reasoning_effort
    elif not family.reasoning_effort:
        out.pop("reasoning_effort", None)
    if family.cache_prompt:
        out["cache_prompt"] = True
    messages: list[Any] = []
    for message in out.get("messages") or []:
        if not isinstance(message, dict):
            messages.append(message)
            continue
        message = {k: v for k, v in message.items() if k not in HISTORY_REASONING}
        if not family.thinking_blocks:
            message.pop("thinking_blocks", None)
        if message.get("role") == "assistant" and message.get("content", "") is None:
            message["content"] = ""  # llama.cpp's server answers 500 to null; "" means the same
        if message.get("role") == "system" and family.system_role == "developer":
            message["role"] = "developer"
        messages.append(message)
    if "messages" in out:
        out["messages"] = messages
    return out
