"""Exporting artifacts as an RO-Crate (crate.py, crate_build.py): which artifacts (one, a
session's, a notebook's), what is known of each (its producing steps, the session's context,
its last reproduction), the people named, and the zip."""

from __future__ import annotations

import tempfile
import zipfile
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any

from .._version import __version__
from ..contracts.errors import BadRequest, NotFound
from ..scratch.workspace import Workspace
from .crate import CrateContent, Exported, Person, as_json_bytes, notebook_authorship
from .crate_build import build_crate
from .provenance import Provenance, SessionRuns, producing_steps, read_run
from .records import ArtifactManifest
from .store import ArtifactStore

MAX_CRATE_ARTIFACTS = 200  # artifacts in one session's or notebook's crate (the newest)


class CrateMaker:
    """Everything a crate is built from: the store, the run logs, the sessions' context
    records, the configured ORCID iDs and license."""

    def __init__(
        self,
        store: ArtifactStore,
        runs_dir: Path,
        sessions_dir: Path,
        orcids: dict[str, str],
        license_id: str = "",
        session_runs: SessionRuns | None = None,
    ) -> None:
        self.store = store
        self.runs_dir = runs_dir
        self.sessions_dir = sessions_dir
        self.orcids = orcids
        self.license_id = license_id
        self.session_runs = session_runs

    def provenance(self, manifest: ArtifactManifest) -> Provenance:
        return producing_steps(manifest, self.runs_dir, self.session_runs)

    def person(self, login: str, name: str = "") -> Person:
        orcid = self.orcids.get(login) or (self.orcids.get(name) if name else None) or ""
        return Person(login, name, orcid)

    def _exported(self, manifest: ArtifactManifest, people: dict[str, Person]) -> Exported:
        _, blob = self.store.content_path(manifest.id)
        provenance = self.provenance(manifest)
        for run in provenance.runs.values():
            if run.owner and run.owner not in people:
                people[run.owner] = self.person(run.owner)
        session = next((s.run.session_id for s in provenance.steps if s.run.session_id), None)
        session = session or manifest.source.session_id
        context = Workspace(self.sessions_dir / session).record() if session else {}
        promoter = None
        if manifest.created_by and manifest.created_by != "agent":
            promoter = people.setdefault(
                manifest.created_by, self.person(manifest.created_by, manifest.created_by_name)
            )
        elif manifest.agent is not None:  # the agent asked; the person whose run it was approved
            owner = provenance.runs.get(manifest.agent.run_id)
            promoter = people.get(owner.owner or "") if owner else None
        reproduction = self.store.reproduction(manifest.id)
        asker = reproduction.get("by") if reproduction else None
        if isinstance(asker, str) and asker:
            name = str((reproduction or {}).get("by_name") or "")
            people.setdefault(asker, self.person(asker, name))
        return Exported(manifest, blob, provenance, promoter, context, reproduction)

    def crate(
        self,
        manifests: list[ArtifactManifest],
        *,
        name: str,
        description: str,
        notebook: tuple[str, dict[str, Any]] | None = None,
    ) -> CrateContent:
        people: dict[str, Person] = {}
        for m in manifests:  # the promoters' names first: a run owner is often one of them
            if m.created_by and m.created_by != "agent":
                people[m.created_by] = self.person(m.created_by, m.created_by_name)
        if notebook is not None:
            for cell in notebook_authorship(notebook[1]):
                login = cell.get("accepted_by")
                if isinstance(login, str) and login:
                    people.setdefault(login, self.person(login, cell.get("accepted_by_name", "")))
        items = [self._exported(m, people) for m in manifests]
        published = datetime.now(timezone.utc).isoformat(timespec="milliseconds")
        return build_crate(
            items,
            name=name,
            description=description,
            version=__version__,
            published=published,
            people=people,
            license_id=self.license_id,
            notebook=notebook,
        )

    def artifact_crate(self, art_id: str) -> CrateContent:
        manifest = self.store.get(art_id)
        title = manifest.title or manifest.source.describe()
        return self.crate(
            [manifest],
            name=f"{title} ({manifest.id})",
            description=f"Artifact {manifest.id} and how it was made: {manifest.source.describe()}",
        )

    def session_crate(self, session_id: str) -> CrateContent:
        found = [m for m in self.store.find() if self._in_session(m, session_id)]
        if not found:
            raise NotFound(f"session '{session_id}' has no promoted artifacts", code="no_artifacts")
        return self.crate(
            found[:MAX_CRATE_ARTIFACTS],
            name=f"Artifacts of session {session_id}",
            description=f"The artifacts promoted from session {session_id}, and how each was made",
        )

    def _in_session(self, manifest: ArtifactManifest, session_id: str) -> bool:
        if manifest.source.session_id == session_id:
            return True
        run_id = manifest.source.run_id or (manifest.agent.run_id if manifest.agent else None)
        run = read_run(self.runs_dir, run_id) if run_id else None
        return run is not None and run.session_id == session_id

    def notebook_crate(self, path: str, content: dict[str, Any] | None) -> CrateContent:
        found = self.store.find(notebook=path)[:MAX_CRATE_ARTIFACTS]
        if not found and content is None:
            raise NotFound(f"notebook '{path}' has no promoted artifacts", code="no_artifacts")
        return self.crate(
            found,
            name=f"Artifacts of {path}",
            description=f"The artifacts promoted from {path}, how each was made, and who wrote "
            "each cell the agent wrote",
            notebook=(path, content) if content is not None else None,
        )


def write_zip(content: CrateContent, out: IO[bytes]) -> None:
    """The crate as a zip: ``ro-crate-metadata.json`` first, then its files."""
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("ro-crate-metadata.json", as_json_bytes(content.metadata))
        for name, data in sorted(content.files.items()):
            if isinstance(data, Path):
                archive.write(data, name)
            else:
                archive.writestr(name, data)


def zip_file(content: CrateContent) -> IO[bytes]:
    """The zip in a temporary file, rewound (spooled in memory while small)."""
    out = tempfile.SpooledTemporaryFile(max_size=8 << 20)  # the caller closes it
    write_zip(content, out)
    out.seek(0)
    return out


def write_folder(content: CrateContent, folder: Path) -> list[Path]:
    """The crate unpacked into ``folder`` (made; refused when it holds anything)."""
    if folder.exists() and any(folder.iterdir()):
        raise BadRequest(f"'{folder}' is not empty", code="not_empty")
    written = [folder / "ro-crate-metadata.json"]
    folder.mkdir(parents=True, exist_ok=True)
    written[0].write_bytes(as_json_bytes(content.metadata))
    for name, data in sorted(content.files.items()):
        target = folder / name
        if not target.resolve().is_relative_to(folder.resolve()):
            raise BadRequest(f"the crate names a file outside itself: {name!r}")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data.read_bytes() if isinstance(data, Path) else data)
        written.append(target)
    return written
