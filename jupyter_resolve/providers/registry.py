"""The providers a server can use, found by entry point, as JupyterLab and jupyter-ai find their
plugins.

Every entry of the group ``jupyter_resolve.providers`` names a :class:`ProviderSpec` under the
provider's name (``c.Resolve.provider``), in the ``[project.entry-points]`` table of the package
that ships it::

    [project.entry-points."jupyter_resolve.providers"]
    toy = "toy_provider:PROVIDER"

A spec holds what the rest of the server needs to know of a provider: its defaults (model,
base URL, the variable its key is in), the ``c.Resolve`` settings it adds (a ``Configurable``
mixin: ``Resolve`` is composed of every installed provider's) and the factory that builds it
from the settings. Every installed spec is loaded with the settings, so a spec's module stays
light: the factory imports the provider itself. Installing a package with an entry in the group
adds a provider; nothing of jupyter-resolve changes.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any, Protocol

from traitlets import TraitError
from traitlets.config import Configurable

if TYPE_CHECKING:
    from .base import Provider

GROUP = "jupyter_resolve.providers"
DEFAULT = "scripted"  # what runs when nothing is configured: offline and deterministic
log = logging.getLogger("jupyter_resolve")


class ProviderConfig(Protocol):
    """The settings (``c.Resolve``) every provider's factory may read; the traits a provider
    adds are on the same object (its spec's ``settings`` is a base of ``Resolve``)."""

    model: str
    stream_usage: bool
    provider_timeout: float
    provider_max_retries: int
    reasoning_effort: str
    model_families: dict[str, Any]

    def resolved_base_url(self) -> str: ...

    def resolved_key_env(self) -> str: ...

    def provider_key(self) -> str | None: ...


Factory = Callable[[Any, logging.Logger], "Provider"]


@dataclass(frozen=True)
class ProviderSpec:
    """One provider: ``summary`` (its line in ``c.Resolve.provider``'s help), ``make`` (the
    settings and the server's log → the provider), what an empty ``c.Resolve.model``,
    ``base_url`` and ``api_key_env`` mean for it, the ``c.Resolve`` traits it adds, and the
    context window its sessions are fitted to when ``c.Resolve.context_tokens`` is 0 (None:
    the model family's)."""

    summary: str
    make: Factory
    default_model: str = ""
    default_base_url: str = ""
    default_key_env: str = ""
    settings: type[Configurable] | None = None
    context_tokens: Callable[[Any], int] | None = None


@functools.cache
def _discovered() -> tuple[dict[str, ProviderSpec], dict[str, str]]:
    """The installed specs by name, and why any entry that names no spec was left out."""
    found: dict[str, ProviderSpec] = {}
    problems: dict[str, str] = {}
    for entry in entry_points(group=GROUP):
        if entry.name in found or entry.name in problems:
            log.warning(
                "jupyter-resolve: a second provider '%s' (%s) is left out", entry.name, entry.value
            )
            continue
        try:
            spec = entry.load()
        except Exception as exc:  # another package's import: it must not stop the server
            problems[entry.name] = f"{entry.value} did not load: {type(exc).__name__}: {exc}"
            log.warning("jupyter-resolve: the provider '%s': %s", entry.name, problems[entry.name])
            continue
        if not isinstance(spec, ProviderSpec):
            problems[entry.name] = f"{entry.value} is not a ProviderSpec"
            log.warning("jupyter-resolve: the provider '%s': %s", entry.name, problems[entry.name])
            continue
        found[entry.name] = spec
    return dict(sorted(found.items())), problems


def installed() -> dict[str, ProviderSpec]:
    """Every provider installed here, by name."""
    return dict(_discovered()[0])


def spec_of(name: str) -> ProviderSpec:
    """The spec of provider ``name``; a TraitError that says what is installed otherwise."""
    specs, problems = _discovered()
    if name in specs:
        return specs[name]
    if name in problems:
        raise TraitError(f"the provider '{name}' cannot be used: {problems[name]}")
    known = ", ".join(repr(n) for n in specs) or f"none (no entry in the {GROUP} group)"
    raise TraitError(
        f"The 'provider' trait of a Resolve instance must be an installed provider "
        f"({known}), not {name!r}: a package adds one with an entry point in the {GROUP} group"
    )


def settings_base() -> type[Configurable]:
    """One class whose bases are the installed providers' settings (``Resolve`` derives from
    it), or ``Configurable`` when none adds any."""
    mixins = tuple(dict.fromkeys(s.settings for s in installed().values() if s.settings))
    if not mixins:
        return Configurable
    return type("ProviderSettings", mixins, {"__doc__": "The installed providers' settings."})


def summary() -> str:
    """Each installed provider with its line, for ``c.Resolve.provider``'s help."""
    return "; ".join(f"'{name}' ({spec.summary})" for name, spec in installed().items())


def http_settings(config: ProviderConfig) -> dict[str, Any]:
    """What every provider on HTTP takes from the settings: where, the key, the default model,
    the timeout and retries, and the variable the key came from (for its messages)."""
    return {
        "base_url": config.resolved_base_url(),
        "api_key": config.provider_key(),
        "model": config.model,
        "timeout": config.provider_timeout,
        "max_retries": config.provider_max_retries,
        "api_key_env": config.resolved_key_env(),
    }


def make_provider(config: Any, log: logging.Logger | None = None) -> Provider:
    """The provider ``config.provider`` names, built by its spec from ``config``."""
    spec = spec_of(str(config.provider))
    return spec.make(config, log or logging.getLogger("jupyter_resolve"))
