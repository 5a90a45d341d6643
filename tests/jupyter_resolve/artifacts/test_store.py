"""The store on real files, and `jupyter resolve artifacts ...` run as a real subprocess: blobs
read-only, a crash between blob and index repaired by reindex, verify naming what changed."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
import zipfile
from contextlib import closing
from pathlib import Path

import pytest
from traitlets import TraitError

from jupyter_resolve.artifacts import ArtifactStore, Source, artifact_id
from jupyter_resolve.artifacts.export import CrateMaker, write_folder
from jupyter_resolve.artifacts.sources import pick
from jupyter_resolve.config import Resolve
from jupyter_resolve.contracts.errors import BadRequest

REPO = Path(__file__).resolve().parents[3]
SCRATCH = Source(kind="scratch", session_id="s1", path="a.txt")


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "JUPYTER_CONFIG_DIR": str(cwd / "cfg")}
    return subprocess.run(
        [sys.executable, "-c", "from jupyter_resolve.cli import main; main()", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_promote_is_idempotent_and_blobs_are_read_only(tmp_path: Path) -> None:
    store = ArtifactStore(tmp_path / "store")
    first, created = store.promote(b"hello", "text/plain", SCRATCH, title="t", created_by="ann")
    assert created
    again, created_again = store.promote(b"hello", "text/plain", SCRATCH, title="other")
    assert not created_again and again == first  # the first manifest stands
    assert first.id == artifact_id(first.sha256, SCRATCH)
    other_source = Source(kind="scratch", session_id="s2", path="a.txt")
    other, _ = store.promote(b"hello", "text/plain", other_source)
    assert other.id != first.id and other.sha256 == first.sha256  # one blob, two artifacts
    blob = store.blob_path(first.sha256)
    assert blob.read_bytes() == b"hello"
    assert blob.stat().st_mode & 0o777 == 0o444
    assert store.manifest_path(first.id).stat().st_mode & 0o777 == 0o444
    assert [m.id for m in store.find()] == [other.id, first.id]
    assert store.verify().problems == []
    assert not list(tmp_path.rglob(".tmp-*"))
    with closing(sqlite3.connect(store.index_path)) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_richest_representation_is_kept() -> None:
    bundle = {"text/plain": "x", "application/json": {"b": 1, "a": [1]}, "text/html": "<i>x</i>"}
    assert pick(bundle, "out") == ("text/html", b"<i>x</i>")
    assert pick({"text/plain": ["a", "b"]}, "out") == ("text/plain", b"ab")
    media, data = pick({"application/json": {"b": 1, "a": 2}, "text/plain": "{}"}, "out")
    assert media == "application/json" and json.loads(data) == {"a": 2, "b": 1}
    with pytest.raises(BadRequest, match="none of"):
        pick({"application/vnd.custom": "x"}, "out")
    with pytest.raises(BadRequest, match="base64"):
        pick({"image/png": "***"}, "out")


CRASH = textwrap.dedent(
    """
    import os, sys
    from pathlib import Path
    from jupyter_resolve.artifacts import ArtifactStore, Source
    store = ArtifactStore(Path(sys.argv[1]))
    where = sys.argv[2]
    if where == "index":
        store._index = lambda manifests: os._exit(9)  # dies after blob and manifest
    else:
        import jupyter_resolve.artifacts.store as module
        real = module.atomic_write
        def write(path, data, mode=0o444):
            if path.suffix == ".json":
                os._exit(9)  # dies after the blob, before the manifest
            real(path, data, mode)
        module.atomic_write = write
    store.promote(b"crash " + where.encode(), "text/plain",
                  Source(kind="scratch", session_id="s", path=where + ".txt"))
    """
)


def test_crash_between_blob_and_index_is_repaired_by_reindex(tmp_path: Path) -> None:
    store_dir = tmp_path / ".resolve" / "artifacts"
    ok = cli("artifacts", "list", cwd=tmp_path)
    assert ok.returncode == 0 and ok.stdout == ""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    store = ArtifactStore(store_dir)
    store.promote(b"kept", "text/plain", SCRATCH)  # the index exists before the crash
    for where in ("index", "manifest"):
        crashed = subprocess.run(
            [sys.executable, "-c", CRASH, str(store_dir), where], env=env, timeout=60
        )
        assert crashed.returncode == 9
    assert len(list((store_dir / "manifests").glob("*.json"))) == 2
    assert len(store.find()) == 1  # the index missed the crashed promotion
    before = cli("artifacts", "verify", cwd=tmp_path)
    assert before.returncode == 1
    assert "not in the index" in before.stdout
    assert "no manifest names it" in before.stdout  # the blob of the second crash, a note
    reindexed = cli("artifacts", "reindex", cwd=tmp_path)
    assert reindexed.returncode == 0, reindexed.stdout + reindexed.stderr
    assert "indexed 2 artifact(s): 0 problem(s)" in reindexed.stdout
    listed = cli("artifacts", "list", cwd=tmp_path)
    assert "index.txt" in listed.stdout and "a.txt" in listed.stdout
    after = cli("artifacts", "verify", cwd=tmp_path)
    assert after.returncode == 0, after.stdout
    # The interrupted manifest-less promotion, tried again, completes.
    _, created = store.promote(
        b"crash manifest", "text/plain", Source(kind="scratch", session_id="s", path="manifest.txt")
    )
    assert created and cli("artifacts", "verify", cwd=tmp_path).returncode == 0


def test_verify_catches_a_changed_and_a_missing_blob(tmp_path: Path) -> None:
    store_dir = tmp_path / "elsewhere"
    store = ArtifactStore(store_dir)
    changed, _ = store.promote(b"original", "text/plain", SCRATCH)
    missing, _ = store.promote(
        b"gone", "text/plain", Source(kind="scratch", session_id="s1", path="b.txt")
    )
    flag = f"--Resolve.artifacts_dir={store_dir}"
    clean = cli("artifacts", "verify", flag, cwd=tmp_path)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "verified 2 artifact(s): 0 problem(s)" in clean.stdout
    blob = store.blob_path(changed.sha256)
    blob.chmod(0o644)
    blob.write_bytes(b"tampered")
    blob.chmod(0o444)
    store.blob_path(missing.sha256).unlink()
    result = cli("artifacts", "verify", flag, cwd=tmp_path)
    assert result.returncode == 1
    assert f"blob {changed.sha256} of {changed.id}: changed" in result.stdout
    assert f"blob {missing.sha256} of {missing.id}: missing" in result.stdout
    assert "2 problem(s)" in result.stdout


def test_verify_catches_an_edited_and_a_deleted_manifest(tmp_path: Path) -> None:
    store = ArtifactStore(tmp_path / "s")
    edited, _ = store.promote(b"one", "text/plain", SCRATCH, title="true title")
    deleted, _ = store.promote(
        b"two", "text/plain", Source(kind="scratch", session_id="s1", path="c.txt")
    )
    path = store.manifest_path(edited.id)
    path.chmod(0o644)
    path.write_text(path.read_text().replace("true title", "rewritten"))
    store.manifest_path(deleted.id).unlink()
    problems = store.verify().problems
    assert f"manifest {edited.id}: changed since it was indexed" in problems
    assert f"manifest {deleted.id}: missing (the index still lists it)" in problems


def test_show_and_export(tmp_path: Path) -> None:
    store = ArtifactStore(tmp_path / ".resolve" / "artifacts")
    manifest, _ = store.promote(b"\x89PNG...", "image/png", SCRATCH, title="plot")
    shown = cli("artifacts", "show", manifest.id, cwd=tmp_path)
    assert shown.returncode == 0
    assert json.loads(shown.stdout)["title"] == "plot"
    out = tmp_path / "out"
    out.mkdir()
    exported = cli("artifacts", "export", "--bytes", manifest.id, str(out), cwd=tmp_path)
    assert exported.returncode == 0, exported.stderr
    assert (out / manifest.id).read_bytes() == b"\x89PNG..."
    exported = cli(
        "artifacts", "export", "--bytes", manifest.id, str(out / "plot.png"), cwd=tmp_path
    )
    assert (out / "plot.png").read_bytes() == b"\x89PNG..."
    unwritable = cli(
        "artifacts",
        "export",
        "--bytes",
        manifest.id,
        str(out / "no" / "such" / "dir"),
        cwd=tmp_path,
    )
    assert unwritable.returncode == 1 and "cannot write" in unwritable.stdout
    missing = cli("artifacts", "show", "art-000000000000000000000000", cwd=tmp_path)
    assert missing.returncode == 1 and "no artifact" in missing.stdout


def test_export_writes_the_crate_as_a_zip_or_a_folder(tmp_path: Path) -> None:
    store = ArtifactStore(tmp_path / ".resolve" / "artifacts")
    manifest, _ = store.promote(b"a,b\n1,2\n", "text/csv", SCRATCH, title="table")
    zipped = cli("artifacts", "export", manifest.id, str(tmp_path / "t.zip"), cwd=tmp_path)
    assert zipped.returncode == 0, zipped.stdout + zipped.stderr
    with zipfile.ZipFile(tmp_path / "t.zip") as archive:
        names = archive.namelist()
        metadata = json.loads(archive.read("ro-crate-metadata.json"))
    assert "provenance.prov.json" in names
    [file] = [e for e in metadata["@graph"] if e.get("identifier") == manifest.id]
    assert file["sha256"] == manifest.sha256 and file["@id"] in names
    folder = cli("artifacts", "export", manifest.id, str(tmp_path / "crate"), cwd=tmp_path)
    assert folder.returncode == 0, folder.stdout + folder.stderr
    assert (tmp_path / "crate" / file["@id"]).read_bytes() == b"a,b\n1,2\n"
    again = cli("artifacts", "export", manifest.id, str(tmp_path / "crate"), cwd=tmp_path)
    assert again.returncode == 1 and "not empty" in again.stdout
    session = cli("artifacts", "export", "--session", "s1", str(tmp_path / "s.zip"), cwd=tmp_path)
    assert session.returncode == 0, session.stdout + session.stderr


def test_people_are_named_by_orcid_when_configured(tmp_path: Path) -> None:
    """c.Resolve.orcids: a promoter known by login or display name is their ORCID iD."""
    store = ArtifactStore(tmp_path / "artifacts")
    manifest, _ = store.promote(
        b"x", "text/plain", SCRATCH, created_by="ada", created_by_name="Ada Lovelace"
    )
    orcids = {"Ada Lovelace": "0000-0002-1825-0097"}
    maker = CrateMaker(store, tmp_path / "runs", tmp_path / "sessions", orcids)
    entities = {e["@id"]: e for e in maker.artifact_crate(manifest.id).metadata["@graph"]}
    promotion = entities[f"#promotion-{manifest.id}"]
    assert promotion["agent"] == {"@id": "https://orcid.org/0000-0002-1825-0097"}
    person = entities["https://orcid.org/0000-0002-1825-0097"]
    assert person == {**person, "@type": "Person", "name": "Ada Lovelace"}
    unknown = CrateMaker(store, tmp_path / "runs", tmp_path / "sessions", {})
    anonymous = unknown.artifact_crate(manifest.id).metadata["@graph"]
    assert not any(str(e["@id"]).startswith("https://orcid.org/") for e in anonymous)
    with pytest.raises(TraitError, match="not an ORCID"):
        Resolve(orcids={"ada": "1234"})


def test_a_call_id_from_the_log_never_names_a_file_outside_the_crate(tmp_path: Path) -> None:
    """Call ids come from the model's provider: in file names and ids they are made safe."""
    runs = tmp_path / "runs"
    runs.mkdir()
    lines = [
        {"seq": 1, "type": "run.started", "data": {"run_id": "run-x", "session_id": "s"}},
        {
            "seq": 2,
            "type": "tool.requested",
            "data": {"call_id": "../../evil", "name": "python", "arguments": {"code": "1"}},
        },
        {"seq": 3, "type": "tool.started", "data": {"call_id": "../../evil", "name": "python"}},
        {
            "seq": 4,
            "type": "tool.completed",
            "data": {"call_id": "../../evil", "name": "python", "ok": True, "output": "1"},
        },
    ]
    (runs / "run-x.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    store = ArtifactStore(tmp_path / "artifacts")
    source = Source(kind="tool", run_id="run-x", call_id="../../evil")
    manifest, _ = store.promote(b"1", "text/plain", source)
    content = CrateMaker(store, runs, tmp_path / "sessions", {}).artifact_crate(manifest.id)
    assert all(".." not in name.split("/") for name in content.files)
    assert "code/run-x/_.._evil.py" in content.files
    written = write_folder(content, tmp_path / "crate")
    assert all(p.resolve().is_relative_to((tmp_path / "crate").resolve()) for p in written)
