"""A chat session's scratch workspace: ``.resolve/sessions/<id>/`` with ``work/`` (the scratch
kernel's cwd, writable), ``context/`` (inputs, read-only, digests in ``MANIFEST.json``),
``home/`` and ``tmp/`` (the kernel's HOME and TMPDIR).

Agent code can write in the session folder (in ``context/`` too when unsandboxed), so the
gateway, which runs unsandboxed, trusts nothing it finds there: what was materialized is
recorded in ``.resolve/context-manifests/<id>.json`` (outside every session; the agent-visible
``context/MANIFEST.json`` is written, never read back), and every file is placed by walking
``context/`` with ``O_NOFOLLOW`` from an open folder, removing whatever sits at a name and
creating the file with ``O_EXCL``: a planted symlink is replaced, never followed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ..contracts.errors import BadRequest

SNAPSHOTS = "snapshots"  # context/snapshots/: values copied from the user's kernel
CONTEXT_INDEX = "MANIFEST.json"  # the context index the agent sees (not a run manifest)
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()


def context_index_bytes(record: dict[str, str]) -> bytes:
    return json.dumps(record, indent=1, sort_keys=True).encode()


@dataclass
class Workspace:
    root: Path

    @property
    def work(self) -> Path:
        return self.root / "work"

    @property
    def context(self) -> Path:
        return self.root / "context"

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def tmp(self) -> Path:
        return self.root / "tmp"

    @property
    def record_path(self) -> Path:
        """The gateway's record of ``context/``: in the state folder, beside ``sessions/``, where
        agent code cannot write (it is hidden from sandboxed kernels)."""
        return self.root.parent.parent / "context-manifests" / f"{self.root.name}.json"

    @property
    def snapshots(self) -> Path:
        """The gateway's copies of the session's snapshots (``context/snapshots/``), beside the
        record, so a snapshot changed in the workspace can be put back."""
        return self.root.parent.parent / "context-snapshots" / self.root.name

    def add_snapshot(self, name: str, source: Path) -> str:
        """Move ``source`` (a file the gateway made) into its keeping and place a copy at
        ``context/snapshots/<name>``, 0400, recorded; its sha256."""
        _check_part(name)
        kept = self.snapshots / name
        kept.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.replace(source, kept)
        target = f"{SNAPSHOTS}/{name}"
        record = self.record()
        record[target] = self._place(target, kept)
        self._save(record)
        return record[target]

    def create(self) -> Workspace:
        for folder in (self.work, self.context, self.home, self.tmp):
            folder.mkdir(parents=True, exist_ok=True)
        return self

    def record(self) -> dict[str, str]:
        """What was materialized: ``{path in context/: sha256}`` (empty when nothing was)."""
        try:
            data = json.loads(self.record_path.read_text())
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)}

    def context_digest(self) -> str | None:
        """sha256 of the context manifest (for the run manifest), from the gateway's record."""
        record = self.record()
        return hashlib.sha256(context_index_bytes(record)).hexdigest() if record else None

    def materialize(self, server_root: Path, paths: list[str], log: logging.Logger) -> None:
        """Copy ``paths`` (relative to the server root) into ``context/``, mode 0400, under their
        resolved path relative to the root, and record their sha256. A path that is absolute,
        has a ``..`` or leaves the root is a :class:`BadRequest`; nothing is written then."""
        sources = [_inside(server_root, rel) for rel in paths]  # check all before writing
        record = self.record()
        for _, target in sources:
            if target == CONTEXT_INDEX or target.startswith(f"{SNAPSHOTS}/"):
                raise BadRequest(f"attachments: '{target}' is a reserved name in context/")
        for source, target in sources:
            record[target] = self._refresh(target, source, record.get(target), log)
        self._save(record)

    def copy_context(self, other: Workspace) -> list[str]:
        """Place ``other``'s recorded context (its files and snapshots) in this workspace, as
        a reproduction starts from them (artifacts/reproduce.py); what no longer reads as
        recorded is left out and named."""
        notes: list[str] = []
        record = self.record()
        for target, recorded in sorted(other.record().items()):
            snapshot = target.startswith(f"{SNAPSHOTS}/")
            name = target.split("/", 1)[1] if snapshot else target
            source = other.snapshots / name if snapshot else other.context / target
            try:
                if sha256_file(source) != recorded:
                    notes.append(f"context/{target} changed since it was recorded; left out")
                    continue
                if snapshot:
                    kept = self.snapshots / name
                    kept.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                    kept.write_bytes(source.read_bytes())
                    source = kept
                record[target] = self._place(target, source)
            except OSError as exc:
                notes.append(f"context/{target} cannot be read ({exc.strerror or exc}); left out")
        self._save(record)
        return notes

    def verify(self, log: logging.Logger, server_root: Path) -> None:
        """Restore ``context/`` from the gateway's record (after a kernel restart): what changed,
        went missing or was replaced by a link is put back from the server root."""
        record = self.record()
        for target in sorted(record):
            try:
                source = (
                    self.snapshots / target.split("/", 1)[1]
                    if target.startswith(f"{SNAPSHOTS}/")
                    else _inside(server_root, target)[0]
                )
            except BadRequest as exc:
                log.warning("context/%s cannot be restored: %s", target, exc.message)
                continue
            record[target] = self._refresh(target, source, record[target], log)
        if record:
            self._save(record)

    def _refresh(self, target: str, source: Path, recorded: str | None, log: logging.Logger) -> str:
        """Make ``context/<target>`` a fresh copy of ``source`` unless it already is; its digest."""
        digest = sha256_file(source)
        if recorded == digest and self._intact(target, digest):
            return digest
        if recorded is not None and recorded != digest:
            log.info("context/%s: its source changed; copying it again", target)
        elif recorded is not None:
            log.warning("context/%s was changed or replaced in the workspace; restoring it", target)
        return self._place(target, source)

    # -- placing files without following anything agent code may have planted --------------

    def _save(self, record: dict[str, str]) -> None:
        data = context_index_bytes(record)
        self.record_path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.record_path.with_suffix(".json.partial")
        partial.write_bytes(data)
        os.replace(partial, self.record_path)
        with self._folder([]) as context:
            _write_new(context, CONTEXT_INDEX, data)

    def _intact(self, target: str, digest: str) -> bool:
        """``context/<target>`` is a regular 0400 file (reached through no link) with ``digest``."""
        parts = PurePosixPath(target).parts
        try:
            with self._folder(list(parts[:-1]), create=False) as folder:
                fd = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=folder)
        except OSError:
            return False
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode) or stat.S_IMODE(info.st_mode) != 0o400:
                return False
            digest_now = hashlib.sha256()
            for block in iter(lambda: handle.read(1 << 16), b""):
                digest_now.update(block)
        return digest_now.hexdigest() == digest

    def _place(self, target: str, source: Path) -> str:
        """Copy ``source`` to ``context/<target>``; the sha256 of what was copied."""
        parts = PurePosixPath(target).parts
        digest = hashlib.sha256()
        src_fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        with os.fdopen(src_fd, "rb") as src, self._folder(list(parts[:-1])) as folder:
            with os.fdopen(_create(folder, parts[-1]), "wb") as out:
                for block in iter(lambda: src.read(1 << 16), b""):
                    digest.update(block)
                    out.write(block)
        return digest.hexdigest()

    @contextlib.contextmanager
    def _folder(self, parts: list[str], create: bool = True) -> Iterator[int]:
        """An open fd of ``context/<parts>``, reached without following a link: a link or file
        where a folder should be is removed and the folder made (``create``), or an OSError."""
        fd = os.open(self.root, _DIR_FLAGS)
        try:
            for part in ["context", *parts]:
                _check_part(part)
                try:
                    child = os.open(part, _DIR_FLAGS, dir_fd=fd)
                except OSError:
                    if not create:
                        raise
                    _remove(fd, part)
                    os.mkdir(part, 0o700, dir_fd=fd)
                    child = os.open(part, _DIR_FLAGS, dir_fd=fd)
                os.close(fd)
                fd = child
                if create:
                    os.fchmod(fd, 0o700)  # we own it; agent code may have made it read-only
            yield fd
        finally:
            os.close(fd)


def _check_part(part: str) -> None:
    if part in ("", ".", "..") or "/" in part or "\0" in part:
        raise BadRequest(f"context: '{part}' is not a file or folder name")


def _remove(folder: int, name: str) -> None:
    """Remove whatever is at ``name`` in ``folder`` (a file, a link, a tree); follow nothing."""
    try:
        info = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(info.st_mode):
        os.unlink(name, dir_fd=folder)
        return
    fd = os.open(name, _DIR_FLAGS, dir_fd=folder)
    try:
        os.fchmod(fd, 0o700)
        for entry in os.listdir(fd):
            _remove(fd, entry)
    finally:
        os.close(fd)
    os.rmdir(name, dir_fd=folder)


def _create(folder: int, name: str) -> int:
    """A new file ``name`` in ``folder``, 0400: whatever was there is removed first, and
    ``O_EXCL | O_NOFOLLOW`` refuses anything that appears at the name in between."""
    _check_part(name)
    _remove(folder, name)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    return os.open(name, flags, 0o400, dir_fd=folder)


def _write_new(folder: int, name: str, data: bytes) -> None:
    with os.fdopen(_create(folder, name), "wb") as out:
        out.write(data)


def _inside(root: Path, rel: str) -> tuple[Path, str]:
    """The resolved source file of ``rel`` and its target in ``context/``: its path relative
    to the resolved root, so a link inside the root cannot steer the target anywhere else."""
    if os.path.isabs(rel):
        raise BadRequest(f"attachments: '{rel}' must be relative to the server root")
    if ".." in PurePosixPath(rel).parts:
        raise BadRequest(f"attachments: '{rel}' must not contain '..'")
    real_root = root.resolve()
    path = (real_root / rel).resolve()
    if not path.is_relative_to(real_root):
        raise BadRequest(f"attachments: '{rel}' leaves the server root")
    if not path.is_file():
        raise BadRequest(f"attachments: '{rel}' is not a file under the server root")
    target = path.relative_to(real_root).as_posix()
    if target == ".":
        raise BadRequest(f"attachments: '{rel}' is not a file under the server root")
    return path, target
