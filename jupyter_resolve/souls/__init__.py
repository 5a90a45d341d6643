"""Souls: Markdown files with front matter naming a role's prompt, tools and round budget.

Built-in souls live beside this file; user souls come from ``c.Resolve.souls_dirs`` and
``.resolve/souls/`` under the server root (a user soul replaces a built-in one of the same name).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from ..contracts.errors import SoulError

BUILTIN_DIR = Path(__file__).parent
ROLES = ("planner", "specialist", "evaluator", "tool-agent")


class Soul(BaseModel):
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]{0,63}$")
    role: str
    description: str
    tools: list[str] | str = Field(default_factory=list)  # "*": every allowed tool
    rounds: int = Field(default=8, ge=1, le=64)
    prompt: str = ""
    source: str = ""

    def tool_names(self, allowed: Sequence[str]) -> list[str]:
        """The soul's tools that are allowed, in the allow list's order."""
        if self.tools == "*":
            return list(allowed)
        wanted = set(self.tools)
        return [name for name in allowed if name in wanted]

    def declared_tools(self) -> list[str]:
        return [] if self.tools == "*" else list(self.tools)

    def system_prompt(self) -> str:
        # The first line lets a scripted model answer per soul (DESIGN 4, tests).
        return f"soul: {self.name}\n{self.prompt.strip()}"


def _value(raw: str) -> str | list[str] | int:
    raw = raw.strip()
    if raw.startswith("[") and raw.endswith("]"):
        return [item.strip().strip("'\"") for item in raw[1:-1].split(",") if item.strip()]
    if raw.isdigit():
        return int(raw)
    return raw.strip("'\"")


def parse_soul(text: str, source: str) -> Soul:
    """Parse a soul file (pure). Front matter between ``---`` lines: ``key: value``,
    lists as ``[a, b]``; the rest is the prompt."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        raise SoulError(f"{source}: a soul starts with a '---' front-matter line")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise SoulError(f"{source}: the front matter has no closing '---' line") from None
    fields: dict[str, object] = {}
    for number, line in enumerate(lines[1:end], start=2):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, sep, value = line.partition(":")
        if not sep:
            raise SoulError(f"{source}:{number}: expected 'key: value', got {line!r}")
        fields[key.strip()] = _value(value)
    fields["prompt"] = "\n".join(lines[end + 1 :]).strip()
    fields["source"] = source
    try:
        return Soul.model_validate(fields)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise SoulError(f"{source}: {where}: {err['msg']}") from exc


def load_souls(dirs: Iterable[Path], log: logging.Logger | None = None) -> dict[str, Soul]:
    """Built-in souls, then each folder of ``dirs`` in order (later ones win)."""
    souls: dict[str, Soul] = {}
    for folder in [BUILTIN_DIR, *dirs]:
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.md")):
            try:
                soul = parse_soul(path.read_text(encoding="utf-8"), str(path))
            except (OSError, UnicodeDecodeError, SoulError) as exc:
                if log is None:
                    raise
                log.error("skipping soul %s", exc)
                continue
            souls[soul.name] = soul
    return souls
