"""``jupyter resolve artifacts list | show ID | verify | reindex | export ID DEST |
reproduce ID``.

Run in the server root, or give ``--Resolve.artifacts_dir`` (and ``--Resolve.state_dir``, where
the run logs and sessions are); without them the store is ``.resolve/artifacts`` under the
current directory.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from jupyter_core.application import JupyterApp
from traitlets import Bool, Unicode

from ..config import Resolve
from ..contracts.errors import ResolveError
from .crate import CrateContent
from .export import CrateMaker, write_folder, write_zip
from .store import ArtifactStore, Report


class StoreApp(JupyterApp):
    """Base of the subcommands: the store the configuration names."""

    classes = [Resolve]  # noqa: RUF012 (traitlets declares it an instance list)

    def store(self) -> ArtifactStore:
        configured = Resolve(parent=self).artifacts_dir
        return ArtifactStore(Path(configured or ".resolve/artifacts").expanduser().absolute())

    def state_dir(self) -> Path:
        configured = Resolve(parent=self).state_dir
        return Path(configured or ".resolve").expanduser().absolute()

    def args(self, names: tuple[str, ...]) -> list[str]:
        if len(self.extra_args) != len(names):
            usage = " ".join(n.upper() for n in names)
            self.log.error(
                "usage: jupyter resolve artifacts %s %s", self.name.split("-")[-1], usage
            )
            self.exit(2)
        return list(self.extra_args)

    def fail(self, exc: ResolveError) -> None:
        print(f"error: {exc.message}")
        self.exit(1)


class ListApp(StoreApp):
    name = "jupyter-resolve-artifacts-list"
    description = "List the indexed artifacts, newest first."

    def start(self) -> None:
        for m in self.store().find():
            title = f"  {m.title}" if m.title else ""
            print(f"{m.id}  {m.media_type:24} {m.size:>10}  {m.source.describe()}{title}")


class ShowApp(StoreApp):
    name = "jupyter-resolve-artifacts-show"
    description = "Print the manifest of artifact ID."

    def start(self) -> None:
        (art_id,) = self.args(("id",))
        try:
            print(json.dumps(self.store().get(art_id).to_json(), indent=2, sort_keys=True))
        except ResolveError as exc:
            self.fail(exc)


def _print(report: Report, verb: str) -> None:
    for line in report.problems:
        print(f"PROBLEM  {line}")
    for line in report.notes:
        print(f"note     {line}")
    print(f"{verb} {report.checked} artifact(s): {len(report.problems)} problem(s)")


class VerifyApp(StoreApp):
    name = "jupyter-resolve-artifacts-verify"
    description = "Re-hash every blob and manifest; exit 1 naming what changed or went missing."

    def start(self) -> None:
        report = self.store().verify()
        _print(report, "verified")
        if report.problems:
            self.exit(1)


class ReindexApp(StoreApp):
    name = "jupyter-resolve-artifacts-reindex"
    description = "Rebuild the index from the manifests (repairs an interrupted promotion)."

    def start(self) -> None:
        report = self.store().reindex()
        _print(report, "indexed")
        if report.problems:
            self.exit(1)


class ExportApp(StoreApp):
    name = "jupyter-resolve-artifacts-export"
    description = (
        "Write the RO-Crate of artifact ID to DEST: a .zip, else a new folder; with --session "
        "or --notebook (and no ID) the crate of all their artifacts; with --bytes, copy only "
        "the bytes (DEST a file, or a folder to put <ID> in)."
    )
    flags = {  # noqa: RUF012
        "bytes": ({"ExportApp": {"bytes": True}}, "Copy the artifact's bytes, not its crate.")
    }
    aliases = {"session": "ExportApp.session", "notebook": "ExportApp.notebook"}  # noqa: RUF012
    bytes = Bool(False, config=True, help="Copy the artifact's bytes, not its crate.")
    session = Unicode("", config=True, help="Export the crate of this session's artifacts.")
    notebook = Unicode("", config=True, help="Export the crate of this notebook's artifacts.")

    def start(self) -> None:
        whole = self.session or self.notebook
        art_id, dest = ("", *self.args(("dest",))) if whole else self.args(("id", "dest"))
        try:
            if self.bytes:
                return self._bytes(art_id, Path(dest))
            content = self._crate(art_id)
            target = Path(dest)
            if target.suffix == ".zip":
                with target.open("wb") as out:
                    write_zip(content, out)
            else:
                write_folder(content, target)
        except ResolveError as exc:
            return self.fail(exc)
        except OSError as exc:
            print(f"error: cannot write {dest}: {exc.strerror or exc}")
            self.exit(1)
        print(f"{art_id or whole} → {dest} (RO-Crate, {len(content.files) + 1} files)")

    def _crate(self, art_id: str) -> CrateContent:
        config = Resolve(parent=self)
        state = self.state_dir()
        maker = CrateMaker(
            self.store(),
            state / "runs",
            state / "sessions",
            dict(config.orcids),
            config.crate_license,
        )
        if self.session:
            return maker.session_crate(self.session)
        if self.notebook:
            path = Path(self.notebook)
            content = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
            return maker.notebook_crate(self.notebook, content)
        return maker.artifact_crate(art_id)

    def _bytes(self, art_id: str, target: Path) -> None:
        manifest, blob = self.store().content_path(art_id)
        if target.is_dir():
            target = target / manifest.id
        try:
            shutil.copyfile(blob, target)
        except OSError as exc:
            print(f"error: cannot write {target}: {exc.strerror or exc}")
            self.exit(1)
        print(f"{manifest.id} → {target} ({manifest.media_type}, {manifest.size} bytes)")


class ArtifactsApp(JupyterApp):
    """Promoted artifacts: the store under .resolve/artifacts (or c.Resolve.artifacts_dir)."""

    name = "jupyter-resolve-artifacts"
    description = "List, show, verify, reindex, export and reproduce promoted artifacts."
    classes = [Resolve]  # noqa: RUF012
    subcommands = {  # noqa: RUF012
        "list": (ListApp, ListApp.description),
        "show": (ShowApp, ShowApp.description),
        "verify": (VerifyApp, VerifyApp.description),
        "reindex": (ReindexApp, ReindexApp.description),
        "export": (ExportApp, ExportApp.description),
        "reproduce": (
            "jupyter_resolve.reproduce_app.ReproduceApp",
            "Run the calls that made artifact ID again in a fresh scratch kernel and compare.",
        ),
    }

    def start(self) -> None:
        if self.subapp is not None:
            self.subapp.start()
            return
        self.print_help()
        self.exit(0)
