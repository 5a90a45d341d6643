"""``jupyter resolve artifacts list | show ID | verify | reindex | export ID DEST``.

Run in the server root, or give ``--Resolve.artifacts_dir``; without it the store is
``.resolve/artifacts`` under the current directory.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from jupyter_core.application import JupyterApp

from ..config import Resolve
from ..contracts.errors import ResolveError
from .store import ArtifactStore, Report


class _StoreApp(JupyterApp):
    """Base of the subcommands: the store the configuration names."""

    classes = [Resolve]  # noqa: RUF012 (traitlets declares it an instance list)

    def store(self) -> ArtifactStore:
        configured = Resolve(parent=self).artifacts_dir
        return ArtifactStore(Path(configured or ".resolve/artifacts").expanduser().absolute())

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


class ListApp(_StoreApp):
    name = "jupyter-resolve-artifacts-list"
    description = "List the indexed artifacts, newest first."

    def start(self) -> None:
        for m in self.store().find():
            title = f"  {m.title}" if m.title else ""
            print(f"{m.id}  {m.media_type:24} {m.size:>10}  {m.source.describe()}{title}")


class ShowApp(_StoreApp):
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


class VerifyApp(_StoreApp):
    name = "jupyter-resolve-artifacts-verify"
    description = "Re-hash every blob and manifest; exit 1 naming what changed or went missing."

    def start(self) -> None:
        report = self.store().verify()
        _print(report, "verified")
        if report.problems:
            self.exit(1)


class ReindexApp(_StoreApp):
    name = "jupyter-resolve-artifacts-reindex"
    description = "Rebuild the index from the manifests (repairs an interrupted promotion)."

    def start(self) -> None:
        report = self.store().reindex()
        _print(report, "indexed")
        if report.problems:
            self.exit(1)


class ExportApp(_StoreApp):
    name = "jupyter-resolve-artifacts-export"
    description = "Copy the bytes of artifact ID to DEST (a file, or a folder to put <ID> in)."

    def start(self) -> None:
        art_id, dest = self.args(("id", "dest"))
        try:
            manifest, blob = self.store().content_path(art_id)
        except ResolveError as exc:
            return self.fail(exc)
        target = Path(dest)
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
    description = "List, show, verify, reindex and export promoted artifacts."
    classes = [Resolve]  # noqa: RUF012
    subcommands = {  # noqa: RUF012
        "list": (ListApp, ListApp.description),
        "show": (ShowApp, ShowApp.description),
        "verify": (VerifyApp, VerifyApp.description),
        "reindex": (ReindexApp, ReindexApp.description),
        "export": (ExportApp, ExportApp.description),
    }

    def start(self) -> None:
        if self.subapp is not None:
            self.subapp.start()
            return
        self.print_help()
        self.exit(0)
