"""A chat session's scratch workspace: ``.resolve/sessions/<id>/`` with ``work/`` (the scratch
kernel's cwd, writable), ``context/`` (inputs, read-only, digests in ``MANIFEST.json``),
``home/`` and ``tmp/`` (the kernel's HOME and TMPDIR)."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from ..errors import BadRequest


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()


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

    def create(self) -> Workspace:
        for folder in (self.work, self.context, self.home, self.tmp):
            folder.mkdir(parents=True, exist_ok=True)
        return self

    def materialize(self, server_root: Path, paths: list[str], log: logging.Logger) -> None:
        """Copy ``paths`` (relative to the server root) into ``context/``, mode 0400, with their
        sha256 in ``context/MANIFEST.json``. A copy whose digest no longer matches its source
        is replaced (and the fact logged)."""
        manifest_path = self.context / "MANIFEST.json"
        manifest: dict[str, str] = {}
        for rel in paths:
            source = _inside(server_root, rel)
            target = self.context / rel
            digest = sha256_file(source)
            if target.exists() and sha256_file(target) != digest:
                log.warning("context/%s changed since it was materialized; restoring it", rel)
                target.chmod(0o600)
                target.unlink()
            if not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, target)
                target.chmod(0o400)
            manifest[rel] = digest
        if manifest_path.exists():
            manifest_path.chmod(0o600)
        manifest_path.write_text(json.dumps(manifest, indent=1, sort_keys=True))
        manifest_path.chmod(0o400)

    def verify(self, log: logging.Logger, server_root: Path) -> None:
        """Re-check ``context/`` against its manifest and restore what changed or went missing."""
        manifest_path = self.context / "MANIFEST.json"
        if not manifest_path.exists():
            return
        manifest = json.loads(manifest_path.read_text())
        self.materialize(server_root, sorted(manifest), log)


def _inside(root: Path, rel: str) -> Path:
    if os.path.isabs(rel):
        raise BadRequest(f"attachments: '{rel}' must be relative to the server root")
    path = (root / rel).resolve()
    if not path.is_relative_to(root.resolve()):
        raise BadRequest(f"attachments: '{rel}' leaves the server root")
    if not path.is_file():
        raise BadRequest(f"attachments: '{rel}' is not a file under the server root")
    return path
