"""The file tools: read_file, write_file, edit_file, list_dir, search_files, all confined to the
session workspace through :mod:`kernel_tools.paths`."""

from __future__ import annotations

import fnmatch
import os
import re
import tempfile

from .paths import PathError, Workspace, within
from .result import Result, error, ok, truncate

LIST_LIMIT = 500
SEARCH_FILE_LIMIT = 2 * 1024 * 1024
SEARCH_LINE_LIMIT = 300
SKIP_DIRS = frozenset({".git", "__pycache__", ".ipynb_checkpoints", "node_modules"})


def _is_binary(data: bytes) -> bool:
    return b"\x00" in data[:8192]


def _load(ws: Workspace, tool: str, path: str, *, write: bool = False) -> tuple[str, str]:
    """(real path, text) of an existing text file; raises PathError with the tool's message."""
    real = ws.resolve(path, write=write)
    folder = "context/" if ws.display(real).startswith("context/") else "work/"
    where = f"the workspace ({folder})"
    if not os.path.lexists(real):
        raise PathError(f"{path!r} does not exist in {where}")
    if os.path.isdir(real):
        raise PathError(f"{path!r} is a directory; use list_dir to see its entries")
    with open(real, "rb") as handle:
        data = handle.read()
    if _is_binary(data):
        raise PathError(f"{path!r} is a binary file ({len(data)} bytes); {tool} reads text only")
    if write:
        try:
            return real, data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise PathError(f"{path!r} is not valid UTF-8 ({exc.reason}); cannot edit it") from exc
    return real, data.decode("utf-8", errors="replace")


def _atomic_write(real: str, content: str) -> int:
    data = content.encode("utf-8")
    folder = os.path.dirname(real)
    os.makedirs(folder, exist_ok=True)
    mode = os.stat(real).st_mode & 0o7777 if os.path.exists(real) else None
    fd, temp = tempfile.mkstemp(dir=folder, prefix=".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        if mode is not None:
            os.chmod(temp, mode)
        os.replace(temp, real)
    except BaseException:
        if os.path.exists(temp):
            os.unlink(temp)
        raise
    return len(data)


def read_file(ws: Workspace, path: str, offset: int = 1, limit: int | None = None) -> Result:
    try:
        _, text = _load(ws, "read_file", path)
    except (PathError, OSError) as exc:
        return error(f"read_file: {exc}")
    if offset == 1 and limit is None:
        return ok(truncate(text))
    lines = text.splitlines(keepends=True)
    if offset > len(lines) and lines:
        return error(f"read_file: offset {offset} is past the end of {path!r} ({len(lines)} lines)")
    end = len(lines) if limit is None else min(len(lines), offset - 1 + limit)
    body = "".join(lines[offset - 1 : end])
    if end < len(lines):
        body += f"\n[lines {offset}-{end} of {len(lines)} shown; offset={end + 1} reads on]"
    return ok(truncate(body))


def write_file(ws: Workspace, path: str, content: str) -> Result:
    try:
        real = ws.resolve(path, write=True)
        if os.path.isdir(real):
            return error(f"write_file: {path!r} is a directory; give a file path")
        size = _atomic_write(real, content)
    except (PathError, OSError) as exc:
        return error(f"write_file: {exc}")
    return ok(f"wrote {size} bytes to {ws.display(real)}")


def edit_file(ws: Workspace, path: str, old: str, new: str) -> Result:
    if not old:
        return error("edit_file: 'old' is empty; give the exact text to replace")
    try:
        real, text = _load(ws, "edit_file", path, write=True)
        count = text.count(old)
        if count == 0:
            return error(
                f"edit_file: the old text was not found in {path!r}; it must match exactly, "
                "whitespace and line breaks included (read_file shows the current text)"
            )
        if count > 1:
            return error(
                f"edit_file: the old text is ambiguous: found {count} times in {path!r}; "
                "include more surrounding lines so it occurs exactly once"
            )
        line = text[: text.index(old)].count("\n") + 1
        _atomic_write(real, text.replace(old, new, 1))
    except (PathError, OSError) as exc:
        return error(f"edit_file: {exc}")
    return ok(f"replaced 1 occurrence in {ws.display(real)} at line {line}")


def list_dir(ws: Workspace, path: str = "") -> Result:
    try:
        real = ws.resolve(path)
        if not os.path.isdir(real):
            what = "is a file" if os.path.exists(real) else "does not exist in the workspace"
            return error(f"list_dir: {path!r} {what}; give a folder (default: work/)")
        with os.scandir(real) as scan:
            entries = sorted(scan, key=lambda entry: entry.name)
    except (PathError, OSError) as exc:
        return error(f"list_dir: {exc}")
    shown = ws.display(real)
    lines = [f"{shown if shown.endswith('/') else shown + '/'} ({len(entries)} entries)"]
    for entry in entries[:LIST_LIMIT]:
        link = " (symlink)" if entry.is_symlink() else ""
        try:
            if entry.is_dir():
                lines.append(f"{entry.name}/{link}")
            else:
                lines.append(f"{entry.name}  {entry.stat().st_size} bytes{link}")
        except OSError:
            lines.append(f"{entry.name}  (unreadable){link}")
    if len(entries) > LIST_LIMIT:
        lines.append(f"[{len(entries) - LIST_LIMIT} more entries not shown]")
    return ok(truncate("\n".join(lines)))


def _files_under(root: str) -> list[str]:
    if not os.path.isdir(root):
        return [root]
    found: list[str] = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        found.extend(os.path.join(folder, name) for name in sorted(names))
    return found


def search_files(
    ws: Workspace,
    pattern: str,
    path: str = "",
    glob: str | None = None,
    max_hits: int = 100,
) -> Result:
    try:
        regex = re.compile(pattern)
    except re.error as exc:
        return error(f"search_files: {pattern!r} is not a valid regular expression: {exc}")
    try:
        root = ws.resolve(path)
    except PathError as exc:
        return error(f"search_files: {exc}")
    if not os.path.exists(root):
        return error(f"search_files: {path!r} does not exist in the workspace")
    hits: list[str] = []
    skipped = 0
    session = os.path.realpath(ws.session_dir)
    for file in _files_under(root):
        shown = ws.display(file)
        if glob and not (
            fnmatch.fnmatch(os.path.basename(file), glob) or fnmatch.fnmatch(shown, glob)
        ):
            continue
        try:
            if not within(session, os.path.realpath(file)):  # a symlink leaving the workspace
                skipped += 1
                continue
            if os.path.getsize(file) > SEARCH_FILE_LIMIT:
                skipped += 1
                continue
            with open(file, "rb") as handle:
                data = handle.read()
        except OSError:
            skipped += 1
            continue
        if _is_binary(data):
            continue
        for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
            if regex.search(line):
                text = line if len(line) <= SEARCH_LINE_LIMIT else line[:SEARCH_LINE_LIMIT] + "…"
                hits.append(f"{shown}:{number}: {text}")
                if len(hits) >= max_hits:
                    hits.append(f"[stopped at max_hits={max_hits}; narrow the search for more]")
                    return ok(truncate("\n".join(hits)))
    if not hits:
        where = ws.display(root)
        note = f" ({skipped} files skipped: over 2 MB or unreadable)" if skipped else ""
        return ok(f"no matches for {pattern!r} under {where}{note}")
    return ok(truncate("\n".join(hits)))
