"""The artifact store (DESIGN 3.7): content-addressed blobs, one JSON manifest per artifact, and
an SQLite index rebuilt from the manifests.

    <root>/blobs/<sha[:2]>/<sha256>   the bytes: written to a temp file, fsynced, renamed, 0444
    <root>/manifests/<id>.json        the manifest (the record of truth), written the same way
    <root>/index.sqlite               the index (WAL): a cache of the manifests, for listing

A crash between blob and index leaves a manifest the index lacks (or a blob with no manifest);
``reindex`` rebuilds the index from the manifests and names the orphans.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from pydantic import ValidationError

from ..contracts.errors import BadMediaType, BadRequest, NotFound
from .media import normalize_media_type
from .records import ID_PATTERN, AgentOrigin, ArtifactManifest, Source, artifact_id

_SCHEMA = """
CREATE TABLE IF NOT EXISTS artifacts (
    id TEXT PRIMARY KEY,
    sha256 TEXT NOT NULL,
    media_type TEXT NOT NULL,
    size INTEGER NOT NULL,
    notebook TEXT,
    session_id TEXT,
    run_id TEXT,
    created_at TEXT NOT NULL,
    manifest_sha256 TEXT NOT NULL,
    manifest TEXT NOT NULL
)
"""
_SHA = re.compile(r"^[0-9a-f]{64}$")
_BLOCK = 1 << 20


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(_BLOCK), b""):
            digest.update(block)
    return digest.hexdigest()


def atomic_write(path: Path, data: bytes, mode: int = 0o444) -> None:
    """Write ``data`` to a temp file beside ``path``, fsync, set ``mode``, rename, fsync the dir.

    The final name never holds a partial or writable file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
            os.fchmod(handle.fileno(), mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


@dataclass
class Report:
    """What ``verify`` or ``reindex`` found: problems fail the check; notes do not."""

    checked: int = 0
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


class ArtifactStore:
    """Blobs, manifests and the index under one folder (created on first write)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @property
    def blobs(self) -> Path:
        return self.root / "blobs"

    @property
    def manifests(self) -> Path:
        return self.root / "manifests"

    @property
    def index_path(self) -> Path:
        return self.root / "index.sqlite"

    def blob_path(self, sha256: str) -> Path:
        return self.blobs / sha256[:2] / sha256

    def manifest_path(self, art_id: str) -> Path:
        return self.manifests / f"{art_id}.json"

    # -- writing -----------------------------------------------------------------------------

    def promote(
        self,
        data: bytes,
        media_type: str,
        source: Source,
        *,
        title: str = "",
        note: str = "",
        created_by: str = "",
        created_by_name: str = "",
        agent: AgentOrigin | None = None,
        owner: str | None = None,
    ) -> tuple[ArtifactManifest, bool]:
        """Store ``data``; answer its manifest and whether it is new. Same bytes from the same
        source answer the existing manifest (and put back its blob if that went missing)."""
        try:
            media_type = normalize_media_type(media_type)
        except BadMediaType as exc:
            raise BadRequest(f"media_type: {exc}", code="bad_media_type") from exc
        sha = hashlib.sha256(data).hexdigest()
        art_id = artifact_id(sha, source)
        blob = self.blob_path(sha)
        if not blob.exists():
            atomic_write(blob, data)
        existing = self._read(art_id)
        if existing is not None:
            self._index([existing])
            return existing, False
        manifest = ArtifactManifest(
            id=art_id,
            sha256=sha,
            media_type=media_type,
            size=len(data),
            title=title,
            note=note,
            source=source,
            created_at=datetime.now(timezone.utc).isoformat(timespec="milliseconds"),
            created_by=created_by,
            created_by_name=created_by_name,
            agent=agent,
            owner=owner,
        )
        atomic_write(self.manifest_path(art_id), _manifest_bytes(manifest))
        self._index([manifest])
        return manifest, True

    # -- reading -----------------------------------------------------------------------------

    def get(self, art_id: str) -> ArtifactManifest:
        manifest = self._read(art_id) if re.match(ID_PATTERN, art_id) else None
        if manifest is None:
            raise NotFound(f"no artifact '{art_id}'", code="unknown_artifact")
        return manifest

    def content_path(self, art_id: str) -> tuple[ArtifactManifest, Path]:
        manifest = self.get(art_id)
        path = self.blob_path(manifest.sha256)
        if not path.is_file():
            raise NotFound(
                f"the bytes of artifact '{art_id}' are missing (run `jupyter resolve artifacts "
                "verify`)",
                code="missing_blob",
            )
        return manifest, path

    def find(
        self,
        *,
        notebook: str | None = None,
        media_type: str | None = None,
        run_id: str | None = None,
    ) -> list[ArtifactManifest]:
        """Indexed manifests, newest first, filtered by notebook, media type or agent run."""
        if not self.index_path.exists() and not self.manifests.is_dir():
            return []
        with self._db() as db:
            rows = db.execute(
                "SELECT manifest FROM artifacts WHERE (?1 IS NULL OR notebook = ?1) "
                "AND (?2 IS NULL OR media_type = ?2) AND (?3 IS NULL OR run_id = ?3) "
                "ORDER BY created_at DESC, id",
                (notebook, media_type, run_id),
            ).fetchall()
        return [ArtifactManifest.model_validate_json(row[0]) for row in rows]

    # -- reproductions ------------------------------------------------------------------------

    def reproduction_path(self, art_id: str) -> Path:
        return self.root / "reproductions" / f"{art_id}.json"

    def save_reproduction(self, art_id: str, result: dict[str, object]) -> None:
        """Keep the last reproduction of ``art_id`` (one per artifact: each replaces the last)."""
        data = (json.dumps(result, indent=2, sort_keys=True) + "\n").encode()
        atomic_write(self.reproduction_path(self.get(art_id).id), data, mode=0o644)

    def reproduction(self, art_id: str) -> dict[str, object] | None:
        """The last reproduction of ``art_id``, or None."""
        path = self.reproduction_path(art_id)
        try:
            data = json.loads(path.read_bytes()) if re.match(ID_PATTERN, art_id) else None
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    # -- repair and checks -------------------------------------------------------------------

    def reindex(self) -> Report:
        """Rebuild the index from the manifests; name unreadable manifests and orphan blobs."""
        report = Report()
        manifests: list[ArtifactManifest] = []
        for path in self._manifest_files():
            try:
                manifests.append(_load(path))
            except (OSError, ValueError) as exc:
                report.problems.append(f"manifest {path.stem}: unreadable ({_reason(exc)})")
        with self._db(rebuild=False) as db:
            db.execute("DELETE FROM artifacts")
            self._insert(db, manifests)
        report.checked = len(manifests)
        report.notes.extend(self._orphans({m.sha256 for m in manifests}))
        for tmp in self._temp_files():
            tmp.unlink(missing_ok=True)
            report.notes.append(f"removed an unfinished write: {tmp.relative_to(self.root)}")
        return report

    def verify(self) -> Report:
        """Re-hash every blob and manifest; every change or loss is a problem."""
        report = Report()
        indexed: dict[str, str] = {}
        if self.index_path.exists():
            with self._db(rebuild=False) as db:
                rows = db.execute("SELECT id, manifest_sha256 FROM artifacts").fetchall()
            indexed = {row[0]: row[1] for row in rows}
        known: set[str] = set()
        for path in self._manifest_files():
            art_id = path.stem
            report.checked += 1
            try:
                manifest = _load(path)
            except (OSError, ValueError) as exc:
                report.problems.append(f"manifest {art_id}: unreadable ({_reason(exc)})")
                continue
            known.add(manifest.sha256)
            if manifest.id != art_id or artifact_id(manifest.sha256, manifest.source) != art_id:
                report.problems.append(
                    f"manifest {art_id}: changed (its id no longer matches its sha256 and source)"
                )
            if art_id not in indexed:
                report.problems.append(
                    f"manifest {art_id}: not in the index (run `jupyter resolve artifacts reindex`)"
                )
            elif indexed[art_id] != sha256_file(path):
                report.problems.append(f"manifest {art_id}: changed since it was indexed")
            report.problems.extend(self._check_blob(manifest))
        for art_id in sorted(set(indexed) - {p.stem for p in self._manifest_files()}):
            report.problems.append(f"manifest {art_id}: missing (the index still lists it)")
        report.notes.extend(self._orphans(known))
        return report

    def _check_blob(self, manifest: ArtifactManifest) -> list[str]:
        path = self.blob_path(manifest.sha256)
        where = f"blob {manifest.sha256} of {manifest.id}"
        if not path.is_file():
            return [f"{where}: missing"]
        problems = []
        actual = sha256_file(path)
        if actual != manifest.sha256:
            problems.append(f"{where}: changed (its bytes now hash to {actual})")
        mode = path.stat().st_mode & 0o777
        if mode & 0o222:
            problems.append(f"{where}: writable (mode {mode:o}; it should be 444)")
        return problems

    # -- internals ---------------------------------------------------------------------------

    def _read(self, art_id: str) -> ArtifactManifest | None:
        path = self.manifest_path(art_id)
        return _load(path) if path.is_file() else None

    def _manifest_files(self) -> list[Path]:
        if not self.manifests.is_dir():
            return []
        return sorted(p for p in self.manifests.glob("*.json") if not p.name.startswith("."))

    def _temp_files(self) -> Iterator[Path]:
        for folder in (self.manifests, *(self.blobs.glob("*") if self.blobs.is_dir() else [])):
            if folder.is_dir():
                yield from folder.glob(".tmp-*")

    def _orphans(self, known: set[str]) -> list[str]:
        if not self.blobs.is_dir():
            return []
        return [
            f"blob {path.name}: no manifest names it (left by an interrupted promotion)"
            for path in sorted(self.blobs.glob("*/*"))
            if _SHA.match(path.name) and path.name not in known
        ]

    @contextmanager
    def _db(self, *, rebuild: bool = True) -> Iterator[sqlite3.Connection]:
        """A connection in WAL mode, inside one transaction; a new index is filled from the
        manifests at once."""
        self.root.mkdir(parents=True, exist_ok=True)
        with closing(sqlite3.connect(self.index_path, timeout=30)) as db:
            db.execute("PRAGMA journal_mode=WAL")
            new = (
                db.execute(
                    "SELECT 1 FROM sqlite_master WHERE type='table' AND name='artifacts'"
                ).fetchone()
                is None
            )
            with db:
                db.execute(_SCHEMA)
                if new and rebuild:
                    manifests = []
                    for path in self._manifest_files():
                        try:
                            manifests.append(_load(path))
                        except (OSError, ValueError):
                            continue  # reindex and verify name it
                    self._insert(db, manifests)
                yield db

    def _index(self, manifests: list[ArtifactManifest]) -> None:
        with self._db() as db:
            self._insert(db, manifests)

    def _insert(self, db: sqlite3.Connection, manifests: list[ArtifactManifest]) -> None:
        db.executemany(
            "INSERT OR REPLACE INTO artifacts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    m.id,
                    m.sha256,
                    m.media_type,
                    m.size,
                    m.source.notebook,
                    m.source.session_id,
                    m.agent.run_id if m.agent else None,
                    m.created_at,
                    sha256_file(self.manifest_path(m.id)),
                    m.model_dump_json(),
                )
                for m in manifests
            ],
        )


def _manifest_bytes(manifest: ArtifactManifest) -> bytes:
    return (json.dumps(manifest.to_json(), indent=2, sort_keys=True) + "\n").encode()


def _load(path: Path) -> ArtifactManifest:
    return ArtifactManifest.model_validate_json(path.read_bytes())


def _reason(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        err = exc.errors()[0]
        return f"{'.'.join(str(p) for p in err['loc']) or 'manifest'}: {err['msg']}"
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
