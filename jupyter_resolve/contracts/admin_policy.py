"""An administrator's policy file and the locks it makes (pure; DESIGN 10.5, issue 37.3).

The file is JSON: ``{"settings": {NAME: value, ...}, "features": {FEATURE: bool, ...}}``. Each
``settings`` entry locks ``c.Resolve.NAME`` to that value, whatever the user's own config says.
``features`` switches whole features off; each is a lock too:

- ``mcp_servers: false`` — no user-defined MCP servers (``mcp_servers`` locked to ``{}``; an
  administrator's own servers go in ``settings.mcp_servers`` instead);
- ``acp_agents: false`` — no external agents (``acp_agents`` locked to ``{}``, where this version
  has that setting);
- ``peer: false`` — no A2A peer endpoint (``peer_secrets`` locked to ``{}``, its routes refused);
- ``remote_images: false`` — ``allow_remote_images`` locked to False;
- ``require_sandbox: true`` — ``sandbox`` locked to ``"bwrap"`` and ``scratch_kernels`` to
  ``"local"`` (kernels on a Jupyter gateway are not under bubblewrap).

A switched-off feature wins over a ``settings`` entry for the same setting (the stricter of the
two), which is reported as a problem. A name that is not a setting is reported and left out; the
other entries still apply. Nothing here reads a file or a trait: the loader (admin_policy.py at
the package's top) does, and checks each value with the setting's own validation.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .errors import ResolveError
from .redaction import replace_forms, secret_forms

HIDDEN = "(set)"
"""What health shows instead of a locked value that is, or may hold, a secret."""

# feature → (the setting that carries it, the value that switches it off)
FEATURE_LOCKS: dict[str, tuple[str, Any]] = {
    "mcp_servers": ("mcp_servers", {}),
    "acp_agents": ("acp_agents", {}),
    "peer": ("peer_secrets", {}),
    "remote_images": ("allow_remote_images", False),
}
SANDBOX_LOCKS: tuple[tuple[str, Any], ...] = (("sandbox", "bwrap"), ("scratch_kernels", "local"))
"""What ``require_sandbox: true`` locks: an explicit bwrap that cannot work refuses kernels."""

PEER = "peer"
_SECRET_WORDS = frozenset(
    {"secret", "secrets", "token", "password", "passwords", "credential", "credentials", "key"}
)
_MIN_SECRET = 8  # shorter values are not looked for in other shown text


class PolicyError(ResolveError, ValueError):
    """The policy file as a whole cannot be used (not JSON, not the shape above)."""

    code = "bad_policy"


class Features(BaseModel):
    """Whole features an administrator may switch off (true: as the user's config says)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    mcp_servers: bool = True
    acp_agents: bool = True
    peer: bool = True
    remote_images: bool = True
    require_sandbox: bool = False


class AdminPolicy(BaseModel):
    """The policy file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    settings: dict[str, Any] = Field(default_factory=dict)
    features: Features = Field(default_factory=Features)


def parse_policy(text: str | bytes, source: str = "the policy file") -> AdminPolicy:
    """The policy in ``text``; :class:`PolicyError` saying what is wrong (never a value)."""
    try:
        return AdminPolicy.model_validate_json(text)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in error['loc']) or '(top)'}: {error['msg']}"
            for error in exc.errors(include_input=False)
        )
        raise PolicyError(f"{source} is not a valid policy: {problems}") from None


@dataclass(frozen=True)
class LockPlan:
    """The locks a policy asks for: setting → value, and what was wrong with it."""

    values: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    features_off: frozenset[str] = frozenset()


def plan_locks(policy: AdminPolicy, known: Collection[str], source: str = "policy") -> LockPlan:
    """The locks of ``policy`` over the settings ``known`` (the names of ``c.Resolve``)."""
    values: dict[str, Any] = {}
    problems: list[str] = []
    for name, value in policy.settings.items():
        if name not in known:
            problems.append(f"{source}: settings.{name} is not a c.Resolve setting; left out")
            continue
        values[name] = value
    features = policy.features
    off = {name for name in FEATURE_LOCKS if getattr(features, name) is False}
    forced = [FEATURE_LOCKS[name] for name in sorted(off)]
    if features.require_sandbox:
        forced += SANDBOX_LOCKS
    for trait, value in forced:
        if trait not in known:
            continue  # a feature this version does not have is off already
        if trait in values and values[trait] != value:
            problems.append(
                f"{source}: settings.{trait} is overruled by features (locked to {value!r})"
            )
        values[trait] = value
    return LockPlan(values, problems, frozenset(off))


def looks_secret(name: str) -> bool:
    """Whether a setting's name says its value is a secret (``peer_secrets``, not
    ``api_key_env``: that one names an environment variable)."""
    if name.endswith("_env"):
        return False
    return bool(_SECRET_WORDS & set(name.lower().split("_")))


def _plain_text(value: str) -> bool:
    """Not a URL with credentials in it."""
    if "://" not in value:
        return True
    try:
        parts = urlsplit(value)
    except ValueError:
        return False
    return parts.username is None and parts.password is None


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, (bool, int, float)) or isinstance(value, str)


def _shown_value(value: Any) -> Any:
    if isinstance(value, str):
        return value if _plain_text(value) else HIDDEN
    if _scalar(value):
        return value
    if isinstance(value, list) and all(_scalar(v) for v in value):
        items = [_shown_value(v) for v in value]
        return HIDDEN if HIDDEN in items else items
    if isinstance(value, dict) and all(_scalar(v) for v in value.values()):
        flat = {str(k): _shown_value(v) for k, v in value.items()}
        return HIDDEN if HIDDEN in flat.values() else flat
    return HIDDEN  # nested: a server's env, a peer's grant, prices: maybe a secret, not shown


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _strings(v)]
    return []


def shown_locks(values: Mapping[str, Any]) -> dict[str, Any]:
    """The locks as ``/resolve/api/health`` lists them: plain values as they are; ``"(set)"``
    for a secret-looking name, a nested value, or a URL with credentials; and no shown text
    carrying a secret-named setting's value."""
    secrets = [s for name, v in values.items() if looks_secret(name) for s in _strings(v)]
    forms = secret_forms(secrets, _MIN_SECRET)
    shown: dict[str, Any] = {}
    for name, value in sorted(values.items()):
        if looks_secret(name) and value not in ({}, [], "", None):
            shown[name] = HIDDEN
            continue
        seen = _shown_value(value)
        if forms and HIDDEN != seen and any(f in s for s in _strings(seen) for f in forms):
            seen = replace_forms(seen, forms, HIDDEN) if isinstance(seen, str) else HIDDEN
        shown[name] = seen
    return shown
