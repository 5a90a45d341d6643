"""The read-only catalogue a peer may see: souls (``resolve.skills``) and tools (``resolve.tools``).

Only names and descriptions leave, scrubbed of paths and known secrets and cut to
:data:`MAX_TEXT` characters: never a parameter schema, a value, a path or a credential.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..souls import ROLES, Soul, load_souls

MAX_TEXT = 120
"""Longest name or description a peer is shown."""

_POSIX_PATH = re.compile(r"(?<![\w.:/~])(?:~/|/)[\w.-]+(?:/[\w.-]*)*")
_WINDOWS_PATH = re.compile(r"\b[A-Za-z]:\\[^\s'\"`]*")
_TOKEN = re.compile(r"\b(?:sk|pk|rk|ghp|gho|ghs|xox[abpr])[-_][A-Za-z0-9_-]{12,}")


@dataclass(frozen=True)
class SoulEntry:
    """What the catalogue knows of a soul: never its prompt."""

    name: str
    description: str
    role: str = ""
    tools: tuple[str, ...] | None = None  # None: every allowed tool (a soul's ``tools: "*"``)


@functools.cache
def builtin_roles() -> tuple[SoulEntry, ...]:
    """The built-in roles (``souls/*.md``: the souls offer the tools, nothing here names one),
    shown when the gateway has no soul registry."""
    souls = load_souls([])
    return tuple(_entry(souls[role]) for role in ROLES if role in souls)


def _entry(soul: Soul) -> SoulEntry:
    return SoulEntry(
        name=soul.name,
        description=soul.description,
        role=soul.role,
        tools=None if soul.tools == "*" else tuple(soul.tools),
    )


def scrub(text: str, redact: Iterable[str] = ()) -> str:
    """``text`` on one line, with every secret in ``redact``, token-like strings and absolute
    paths replaced by a placeholder."""
    for secret in sorted((s for s in redact if s), key=len, reverse=True):
        text = text.replace(secret, "<redacted>")
    text = _TOKEN.sub("<redacted>", text)
    text = _WINDOWS_PATH.sub("<path>", text)
    text = _POSIX_PATH.sub("<path>", text)
    return " ".join(text.split())


def cut(text: str, limit: int = MAX_TEXT) -> str:
    """At most ``limit`` characters; a cut text ends with an ellipsis."""
    if len(text) <= limit:
        return text
    return text[: limit - 1].rstrip() + "…"


def public_text(text: str, redact: Iterable[str] = ()) -> str:
    """Scrubbed, then cut (so a secret is never half-cut and half-kept)."""
    return cut(scrub(text, redact))


def tool_entries(
    tools: Iterable[tuple[str, str]], redact: Iterable[str] = ()
) -> list[dict[str, str]]:
    """``resolve.tools``: ``{name, description}`` per allowed tool, nothing else."""
    secrets = list(redact)
    return [
        {"name": public_text(name, secrets), "description": public_text(desc, secrets)}
        for name, desc in tools
    ]


def skill_entries(souls: Iterable[SoulEntry], redact: Iterable[str] = ()) -> list[dict[str, str]]:
    """``resolve.skills``: ``{name, description}`` per soul."""
    secrets = list(redact)
    return [
        {"name": public_text(s.name, secrets), "description": public_text(s.description, secrets)}
        for s in souls
    ]


def _field(item: Any, *names: str) -> Any:
    for name in names:
        value = item.get(name) if isinstance(item, Mapping) else getattr(item, name, None)
        if value is not None:
            return value
    return None


def soul_entries(registry: Any) -> list[SoulEntry]:
    """Read souls from whatever the gateway holds (a mapping, a registry with ``list()``, or an
    iterable of soul objects or dicts); fall back to the built-in roles when there are none."""
    if registry is None:
        return list(builtin_roles())
    items: Any = registry
    if isinstance(registry, Mapping):
        items = registry.values()
    else:
        for method in ("list", "all", "values"):
            if callable(getattr(registry, method, None)):
                items = getattr(registry, method)()
                break
    souls: list[SoulEntry] = []
    try:
        iterator = iter(items)
    except TypeError:
        return list(builtin_roles())
    for item in iterator:
        name = _field(item, "name", "id")
        if not isinstance(name, str) or not name:
            continue
        description = _field(item, "description")
        role = _field(item, "role")
        tools = _field(item, "allowed_tools", "tools")
        souls.append(
            SoulEntry(
                name=name,
                description=description if isinstance(description, str) else "",
                role=role if isinstance(role, str) else "",
                # "*" (or no list at all) means every allowed tool
                tools=tuple(t for t in tools if isinstance(t, str))
                if isinstance(tools, (list, tuple, set, frozenset))
                else None,
            )
        )
    return souls or list(builtin_roles())
