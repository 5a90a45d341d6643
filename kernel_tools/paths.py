"""Path confinement for the file tools (DESIGN 5). Pure: only os.path, no file access beyond
resolving symlinks.

Paths from the model are relative to the session's ``work/``; ``context/...`` addresses the
session's read-only ``context/``. Absolute paths, ``..`` that leaves the session folder and
symlinks whose real path leaves it are refused. Writes must land in ``work/``; ``context/`` is
read-only. Notebook paths are relative to the server root and confined to it the same way.
"""

from __future__ import annotations

import os
from dataclasses import dataclass


class PathError(ValueError):
    """A path the tools refuse; the message names the path and the rule."""


def within(root: str, path: str) -> bool:
    """Whether ``path`` is ``root`` or below it (both absolute and normalized)."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def confine(base: str, root: str, path: str, root_name: str) -> str:
    """The real path of ``path`` taken relative to ``base``, refused unless it stays in ``root``
    both as written and after resolving symlinks."""
    if "\x00" in path:
        raise PathError(f"{path!r} contains a NUL character")
    if os.path.isabs(path):
        raise PathError(
            f"{path!r} is an absolute path; absolute paths are refused, give a path relative "
            f"to {root_name}"
        )
    lexical = os.path.normpath(os.path.join(base, path))
    if not within(os.path.normpath(root), lexical):
        raise PathError(f"{path!r} leaves {root_name}: '..' may not climb above it")
    real = os.path.realpath(lexical)
    if not within(os.path.realpath(root), real):
        raise PathError(
            f"{path!r} goes through a symlink that resolves outside {root_name}; "
            "symlinks leaving it are refused"
        )
    return real


@dataclass(frozen=True)
class Workspace:
    """One chat session's folders: ``<session_dir>/work`` and ``<session_dir>/context``."""

    session_dir: str
    server_root: str

    @property
    def work(self) -> str:
        return os.path.join(self.session_dir, "work")

    @property
    def context(self) -> str:
        return os.path.join(self.session_dir, "context")

    def resolve(self, path: str, *, write: bool = False) -> str:
        """The real path a workspace path names. ``write`` refuses all but ``work/``."""
        rel = os.path.normpath(path) if path else "."
        if rel == "context" or rel.startswith("context" + os.sep):
            base, rel = self.session_dir, rel
        else:
            base = self.work
        real = confine(base, self.session_dir, rel, "the session workspace")
        if write:
            context = os.path.realpath(self.context)
            if within(context, real):
                raise PathError(
                    f"{path!r} is in context/, which is read-only (the inputs of this chat); "
                    "write to a path in work/ instead"
                )
            if not within(os.path.realpath(self.work), real):
                raise PathError(f"{path!r} is outside work/; only files in work/ can be written")
        return real

    def resolve_notebook(self, path: str) -> str:
        """The real path of a notebook path relative to the server root."""
        return confine(self.server_root, self.server_root, path, "the server root")

    def display(self, real: str) -> str:
        """How a resolved path is shown to the model: relative to work/, or ``context/...``."""
        for folder, prefix in ((self.work, ""), (self.context, "context/")):
            folder = os.path.realpath(folder)
            if within(folder, real):
                rel = os.path.relpath(real, folder)
                return prefix + ("" if rel == "." else rel) or "."
        return os.path.relpath(real, os.path.realpath(self.work))
