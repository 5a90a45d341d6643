"""``scripted``: the offline default, deterministic (:mod:`jupyter_resolve.providers.scripted`)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from traitlets import Unicode
from traitlets.config import Configurable

from ..registry import ProviderSpec

if TYPE_CHECKING:
    from ..base import Provider


class ScriptedSettings(Configurable):
    """The scripted provider's settings (part of ``c.Resolve``)."""

    script = Unicode(
        "",
        config=True,
        help="JSONL script of model turns for the scripted provider (empty: built-in demo).",
    )


def make(config: Any, log: logging.Logger) -> Provider:
    from ..scripted import ScriptedProvider

    script = str(config.script)
    return ScriptedProvider(Path(script) if script else None, model=config.model or "scripted")


PROVIDER = ProviderSpec(
    summary="offline, deterministic",
    make=make,
    default_model="scripted",
    settings=ScriptedSettings,
)
