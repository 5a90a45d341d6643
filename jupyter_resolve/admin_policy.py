"""The administrator's policy file, found, read and applied to ``c.Resolve`` (issue 37.3).

Where it is: the file ``$JUPYTER_RESOLVE_POLICY`` names (a spawner sets it), else the first
``jupyter_resolve_policy.json`` in Jupyter's environment and system config folders
(``jupyter_core.paths.ENV_CONFIG_PATH``, then ``SYSTEM_CONFIG_PATH``; never the user's
``~/.jupyter``). Its shape and merge rule are in contracts/admin_policy.py.

The variable is read from the environment the process was started with, not ``os.environ``:
jupyter_server runs the user's Python config files (``JupyterApp.initialize``) before it imports
any server extension, so a config file's ``os.environ[...] = ...`` would otherwise name a policy
of the user's choosing, or none. On Linux that environment is ``/proc/self/environ``, which
changes of ``os.environ`` do not touch; elsewhere it is ``os.environ`` (no such protection).

Applied once the user's config is loaded, so a locked setting takes the policy's value whatever
that config says; a later change of a locked setting (a config reload, code in the server) is
undone and logged. A value the setting's own validation refuses is reported and left out, the
rest applies; a file that cannot be read or parsed at all raises :class:`PolicyError`, and the
extension then serves only that reason (fail closed: nobody knows what it meant to lock).

The user's server runs as the user, who can change its code: a lock prevents mistakes and
casual changes; keys and budgets are enforced by the hub service, outside the user's reach.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from traitlets import TraitError

from .config import Resolve
from .contracts.admin_policy import PEER, AdminPolicy, PolicyError, parse_policy, plan_locks
from .contracts.admin_policy import shown_locks as _shown_locks

ENV_VAR = "JUPYTER_RESOLVE_POLICY"
FILE_NAME = "jupyter_resolve_policy.json"
FEATURE_NAMES = {
    "mcp_servers": "user-defined MCP servers",
    "acp_agents": "external (ACP) agents",
    PEER: "the A2A peer endpoint",
    "remote_images": "remote images",
}

__all__ = [
    "ENV_VAR",
    "FILE_NAME",
    "AppliedPolicy",
    "PolicyError",
    "enforce_policy",
    "find_policy",
    "start_environment",
]


@dataclass
class AppliedPolicy:
    """What the policy locked on this server (nothing, without a policy file)."""

    source: str = ""
    locked: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    features_off: frozenset[str] = frozenset()

    def shown(self) -> dict[str, Any]:
        """``/resolve/api/health``'s ``locked``: secrets never shown (contracts)."""
        return _shown_locks(self.locked)

    def feature_off(self, feature: str) -> bool:
        return feature in self.features_off

    def off_reason(self, feature: str) -> str:
        what = FEATURE_NAMES.get(feature, feature)
        return f"switched off: {what}, set by the administrator (policy {self.source})"


def start_environment(proc: Path = Path("/proc/self/environ")) -> Mapping[str, str]:
    """The environment this process was started with (its ``exec``), as far as it can be told:
    ``/proc/self/environ`` on Linux, else ``os.environ``."""
    try:
        raw = proc.read_bytes()
    except OSError:
        return os.environ
    pairs = (item.split(b"=", 1) for item in raw.split(b"\0") if b"=" in item)
    return {name.decode(errors="replace"): value.decode(errors="replace") for name, value in pairs}


def find_policy(
    environ: Mapping[str, str] | None = None, folders: Sequence[str] | None = None
) -> Path | None:
    """The policy file in force, or None. A file the environment names must exist.
    ``environ``: by default the process's start environment (:func:`start_environment`)."""
    environ = start_environment() if environ is None else environ
    named = environ.get(ENV_VAR, "").strip()
    if named:
        return Path(named)
    if folders is None:
        from jupyter_core.paths import ENV_CONFIG_PATH, SYSTEM_CONFIG_PATH

        folders = [*ENV_CONFIG_PATH, *SYSTEM_CONFIG_PATH]
    for folder in folders:
        candidate = Path(folder) / FILE_NAME
        if candidate.is_file():
            return candidate
    return None


def note_changed_variable(found: Path | None, log: logging.Logger) -> None:
    """A warning when ``os.environ`` names another policy than the one in force (set or
    changed after the start, e.g. by a Python config file): it is not followed."""
    now = os.environ.get(ENV_VAR, "").strip()
    if now and Path(now) != found:
        log.warning(
            "jupyter-resolve: %s=%s was set after the server started (a config file?) and is "
            "not followed: the policy is read from where the server's starter names it (%s)",
            ENV_VAR,
            now,
            found or "no policy",
        )


def read_policy(path: Path) -> AdminPolicy:
    try:
        text = path.read_bytes()
    except OSError as exc:
        raise PolicyError(f"the policy file {path} cannot be read: {exc.strerror}") from None
    return parse_policy(text, f"the policy file {path}")


def enforce_policy(config: Resolve, log: logging.Logger, path: Path | None = None) -> AppliedPolicy:
    """Read ``path`` (None: :func:`find_policy`'s), lock ``config`` to it, keep it locked. Each
    refused entry is logged as an error and listed in :attr:`AppliedPolicy.problems`."""
    found = path if path is not None else find_policy()
    note_changed_variable(found, log)
    if found is None:
        return AppliedPolicy()
    applied = apply_policy(config, read_policy(found), str(found))
    for problem in applied.problems:
        log.error("jupyter-resolve: %s", problem)
    if applied.locked:
        log.info(
            "jupyter-resolve: the administrator's policy %s locks %s",
            found,
            ", ".join(sorted(applied.locked)),
        )
    keep_locked(config, applied, log)
    return applied


def apply_policy(config: Resolve, policy: AdminPolicy, source: str) -> AppliedPolicy:
    """Set each lock on ``config`` through the setting's own validation; a value it refuses is
    a problem and stays unlocked."""
    plan = plan_locks(policy, config.trait_names(config=True), f"policy {source}")
    locked: dict[str, Any] = {}
    problems = list(plan.problems)
    for name, value in plan.values.items():
        try:
            setattr(config, name, value)
        except (TraitError, ValueError) as exc:
            reason = " ".join(str(exc).split())
            if name in ("peer_secrets", "mcp_servers", "acp_agents") or "secret" in name:
                reason = "not a valid value"  # these messages may carry a value: never echo it
            problems.append(f"policy {source}: settings.{name} refused ({reason}); not locked")
            continue
        locked[name] = getattr(config, name)  # as the setting keeps it (validators normalize)
    return AppliedPolicy(source, locked, problems, plan.features_off)


def keep_locked(config: Resolve, applied: AppliedPolicy, log: logging.Logger) -> None:
    """Undo any later change of a locked setting (a config reload, a plugin, a session)."""
    if not applied.locked:
        return

    def undo(change: Any) -> None:
        name = change["name"]
        wanted = applied.locked[name]
        if change["new"] != wanted:
            log.warning(
                "jupyter-resolve: c.Resolve.%s is set by the administrator (policy %s); "
                "the change is undone",
                name,
                applied.source,
            )
            config.set_trait(name, wanted)

    config.observe(undo, names=sorted(applied.locked))
