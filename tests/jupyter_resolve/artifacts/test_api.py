"""``/resolve/api/artifacts`` on a real Jupyter server: promote from a saved notebook and from a
scratch file, read back, and refuse bad input without writing anything (DESIGN 3.7)."""

from __future__ import annotations

import base64
import hashlib
import json
import os
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from tests.conftest import Server

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
HTML = "<b>table</b><script>document.title = 'pwned'</script>"


def make_notebook(root: Path, name: str = "analysis.ipynb") -> Path:
    """A saved notebook: a plot (PNG + text), an HTML table, a printed line, an error."""
    cells = [
        new_markdown_cell("# Analysis", id="intro"),
        new_code_cell(
            "plot()",
            id="plot",
            execution_count=3,
            outputs=[
                new_output(
                    "display_data",
                    data={
                        "image/png": base64.b64encode(PNG).decode(),
                        "text/plain": "<Figure>",
                    },
                ),
                new_output(
                    "execute_result",
                    data={"text/html": HTML, "text/plain": "table"},
                    execution_count=3,
                ),
            ],
        ),
        new_code_cell(
            "print('hello')",
            id="printed",
            execution_count=4,
            outputs=[new_output("stream", name="stdout", text="hello\n")],
        ),
        new_code_cell(
            "1/0",
            id="broken",
            execution_count=5,
            outputs=[new_output("error", ename="ZeroDivisionError", evalue="x", traceback=[])],
        ),
        new_code_cell(
            "big",
            id="big",
            execution_count=6,
            outputs=[new_output("execute_result", data={"text/plain": "x" * 5000})],
        ),
    ]
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(new_notebook(cells=cells), path)
    return path


def store_files(root: Path) -> list[str]:
    store = root / ".resolve" / "artifacts"
    if not store.exists():
        return []
    return sorted(str(p.relative_to(store)) for p in store.rglob("*") if p.is_file())


async def test_promote_notebook_output_records_id_and_is_idempotent(
    server: Server, jp_root_dir: Path
) -> None:
    path = make_notebook(jp_root_dir)
    body = {"notebook": "analysis.ipynb", "cell_id": "plot", "output_index": 0, "title": "Fit"}
    response = await server.post("/resolve/api/artifacts", body)
    assert response.status_code == 201, response.text
    manifest = response.json()
    assert manifest["media_type"] == "image/png"  # the richest of the bundle
    assert manifest["sha256"] == hashlib.sha256(PNG).hexdigest()
    assert manifest["size"] == len(PNG)
    assert manifest["title"] == "Fit"
    assert manifest["source"] == {
        "kind": "notebook",
        "notebook": "analysis.ipynb",
        "cell_id": "plot",
        "output_index": 0,
        "execution_count": 3,
        "session_id": None,
        "path": None,
        "label": None,
    }
    assert manifest["created_by"] and manifest["created_at"]
    assert manifest["agent"] is None
    # The id is recorded in that output's metadata, and the notebook is still valid.
    saved = nbformat.read(path, as_version=4)
    nbformat.validate(saved)
    output = saved.cells[1].outputs[0]
    assert output.metadata["resolve"]["artifact_id"] == manifest["id"]
    # The blob is the PNG itself, read-only.
    store = jp_root_dir / ".resolve" / "artifacts"
    blob = store / "blobs" / manifest["sha256"][:2] / manifest["sha256"]
    assert blob.read_bytes() == PNG
    assert oct(blob.stat().st_mode & 0o777) == "0o444"
    manifest_file = store / "manifests" / f"{manifest['id']}.json"
    assert json.loads(manifest_file.read_text())["id"] == manifest["id"]
    assert oct(manifest_file.stat().st_mode & 0o777) == "0o444"
    # Same bytes, same source: the same artifact, nothing new written.
    before = store_files(jp_root_dir)
    again = await server.post("/resolve/api/artifacts", body)
    assert again.status_code == 200
    assert again.json() == manifest
    assert store_files(jp_root_dir) == before
    # Readable back.
    got = await server.get(f"/resolve/api/artifacts/{manifest['id']}")
    assert got.json() == manifest
    content = await server.get(f"/resolve/api/artifacts/{manifest['id']}/content")
    assert content.content == PNG
    assert content.headers["content-type"] == "image/png"
    assert content.headers["x-content-type-options"] == "nosniff"


async def test_stream_output_and_json_bundle(server: Server, jp_root_dir: Path) -> None:
    path = make_notebook(jp_root_dir, "sub/dir/n.ipynb")
    response = await server.post(
        "/resolve/api/artifacts",
        {"notebook": "sub/dir/n.ipynb", "cell_id": "printed", "output_index": 0},
    )
    assert response.status_code == 201, response.text
    manifest = response.json()
    assert manifest["media_type"] == "text/plain" and manifest["size"] == 6
    saved = nbformat.read(path, as_version=4)
    nbformat.validate(saved)  # a stream output has no metadata: the cell records it
    assert saved.cells[2].metadata["resolve"]["outputs"]["0"] == manifest["id"]
    content = await server.get(f"/resolve/api/artifacts/{manifest['id']}/content")
    assert content.text == "hello\n"
    assert content.headers["content-type"] == "text/plain; charset=utf-8"


async def test_promote_scratch_file_and_list_filters(server: Server, jp_root_dir: Path) -> None:
    work = jp_root_dir / ".resolve" / "sessions" / "s-art" / "work"
    (work / "out").mkdir(parents=True)
    (work / "out" / "summary.csv").write_text("a,b\n1,2\n")
    response = await server.post(
        "/resolve/api/artifacts",
        {"session_id": "s-art", "path": "out/summary.csv", "note": "the totals"},
    )
    assert response.status_code == 201, response.text
    scratch = response.json()
    assert scratch["media_type"] == "text/csv"
    assert scratch["note"] == "the totals"
    assert scratch["source"]["kind"] == "scratch"
    assert scratch["source"]["session_id"] == "s-art"
    assert scratch["source"]["path"] == "out/summary.csv"
    again = await server.post(
        "/resolve/api/artifacts", {"session_id": "s-art", "path": "./out/summary.csv"}
    )
    assert again.status_code == 200 and again.json()["id"] == scratch["id"]
    # Changed bytes from the same source: a new artifact.
    (work / "out" / "summary.csv").write_text("a,b\n1,3\n")
    changed = await server.post(
        "/resolve/api/artifacts", {"session_id": "s-art", "path": "out/summary.csv"}
    )
    assert changed.status_code == 201 and changed.json()["id"] != scratch["id"]
    make_notebook(jp_root_dir)
    nb = await server.post(
        "/resolve/api/artifacts",
        {"notebook": "analysis.ipynb", "cell_id": "plot", "output_index": 1},
    )
    listing = (await server.get("/resolve/api/artifacts")).json()["artifacts"]
    assert {a["id"] for a in listing} == {scratch["id"], changed.json()["id"], nb.json()["id"]}
    by_notebook = await server.get("/resolve/api/artifacts", params={"notebook": "analysis.ipynb"})
    assert [a["id"] for a in by_notebook.json()["artifacts"]] == [nb.json()["id"]]
    by_type = await server.get("/resolve/api/artifacts", params={"media_type": "text/csv"})
    assert len(by_type.json()["artifacts"]) == 2
    by_run = await server.get("/resolve/api/artifacts", params={"run": "run-none"})
    assert by_run.json()["artifacts"] == []


async def test_promote_a_kernel_value_bundle_and_a_project_file(
    server: Server, jp_root_dir: Path
) -> None:
    # What `%resolve promote Out[3]` sends: the value's MIME bundle with its cell.
    frame = {
        "text/html": "<table><tr><td>1</td></tr></table>",
        "text/csv": "a\n1\n",
        "text/plain": "   a\n0  1",
    }
    body = {
        "bundle": frame,
        "label": "Out[3]",
        "notebook": "analysis.ipynb",
        "cell_id": "c3",
        "execution_count": 3,
    }
    response = await server.post("/resolve/api/artifacts", body)
    assert response.status_code == 201, response.text
    value = response.json()
    assert value["media_type"] == "text/html"
    assert value["source"]["kind"] == "kernel" and value["source"]["label"] == "Out[3]"
    assert value["source"]["execution_count"] == 3
    as_csv = await server.post("/resolve/api/artifacts", {**body, "media_type": "text/csv"})
    assert as_csv.status_code == 201 and as_csv.json()["media_type"] == "text/csv"
    content = await server.get(f"/resolve/api/artifacts/{as_csv.json()['id']}/content")
    assert content.text == "a\n1\n"
    again = await server.post("/resolve/api/artifacts", body)
    assert again.status_code == 200 and again.json()["id"] == value["id"]
    png = await server.post(
        "/resolve/api/artifacts",
        {"bundle": {"image/png": base64.b64encode(PNG).decode()}, "label": "fig"},
    )
    png_id = png.json()["id"]
    assert (await server.get(f"/resolve/api/artifacts/{png_id}/content")).content == PNG
    missing = await server.post("/resolve/api/artifacts", {**body, "media_type": "image/png"})
    assert missing.status_code == 400 and "has no image/png" in missing.json()["error"]["message"]
    # A file of the project (`%resolve promote --file PATH`).
    (jp_root_dir / "results").mkdir()
    (jp_root_dir / "results" / "table.json").write_text('{"a": 1}')
    file = await server.post("/resolve/api/artifacts", {"file": "results/table.json"})
    assert file.status_code == 201, file.text
    assert file.json()["media_type"] == "application/json"
    assert file.json()["source"]["path"] == "results/table.json"
    outside = await server.post("/resolve/api/artifacts", {"file": "../etc/passwd"})
    assert outside.status_code == 400


async def test_html_content_cannot_run_in_the_jupyter_origin(
    server: Server, jp_root_dir: Path
) -> None:
    make_notebook(jp_root_dir)
    response = await server.post(
        "/resolve/api/artifacts",
        {"notebook": "analysis.ipynb", "cell_id": "plot", "output_index": 1},
    )
    manifest = response.json()
    assert manifest["media_type"] == "text/html"
    content = await server.get(f"/resolve/api/artifacts/{manifest['id']}/content")
    assert content.status_code == 200
    assert content.text == HTML  # the bytes as promoted
    assert content.headers["content-type"] == "text/html; charset=utf-8"
    assert content.headers["x-content-type-options"] == "nosniff"
    assert content.headers["content-disposition"].startswith("attachment")
    csp = [d.strip() for d in content.headers["content-security-policy"].split(";")]
    assert "sandbox" in csp  # no allow-scripts, no allow-same-origin: an opaque origin
    assert "default-src 'none'" in csp
    assert not any("script-src" in d or "allow-" in d for d in csp)


BAD: list[tuple[dict[str, Any], int, str]] = [
    ({"notebook": "analysis.ipynb", "cell_id": "nope", "output_index": 0}, 400, "no cell 'nope'"),
    ({"notebook": "analysis.ipynb", "cell_id": "plot", "output_index": 2}, 400, "has 2 output"),
    ({"notebook": "analysis.ipynb", "cell_id": "intro", "output_index": 0}, 400, "0 output"),
    ({"notebook": "analysis.ipynb", "cell_id": "broken", "output_index": 0}, 400, "an error"),
    ({"notebook": "analysis.ipynb", "cell_id": "big", "output_index": 0}, 400, "over the limit"),
    ({"notebook": "not-a-notebook.ipynb", "cell_id": "a", "output_index": 0}, 400, "not a valid"),
    ({"notebook": "bad-schema.ipynb", "cell_id": "a", "output_index": 0}, 400, "not a valid"),
    ({"notebook": "missing.ipynb", "cell_id": "a", "output_index": 0}, 404, "no file"),
    ({"notebook": "../outside.ipynb", "cell_id": "plot", "output_index": 0}, 400, "leaves"),
    ({"notebook": "OUTSIDE_ABS", "cell_id": "plot", "output_index": 0}, 400, "relative"),
    ({"notebook": "link.ipynb", "cell_id": "plot", "output_index": 0}, 400, "symlink"),
    ({"session_id": "s-bad", "path": "../../../../analysis.ipynb"}, 400, "leaves"),
    ({"session_id": "s-bad", "path": "/etc/hostname"}, 400, "relative"),
    ({"session_id": "s-bad", "path": "escape.txt"}, 400, "symlink"),
    ({"session_id": "s-bad", "path": "large.bin"}, 400, "over the limit"),
    ({"session_id": "s-bad", "path": "nothing.txt"}, 404, "no file"),
    ({"session_id": "s-none", "path": "a.txt"}, 404, "no scratch session"),
    ({"session_id": "../s-bad", "path": "a.txt"}, 400, "session_id"),
    ({"notebook": "analysis.ipynb", "cell_id": "plot"}, 400, "output_index"),
    ({"notebook": "analysis.ipynb", "session_id": "s-bad", "path": "a"}, 400, "one source"),
    ({"notebook": "analysis.ipynb", "cell_id": "plot", "output_index": -1}, 400, "output_index"),
    ({}, 400, "one source"),
    ({"bundle": {"text/plain": "x"}, "output_index": 0}, 400, "not a bundle"),
    ({"bundle": {"application/x-custom": "x"}}, 400, "none of"),
    ({"bundle": {"text/plain": "x" * 5000}}, 400, "over the limit"),
    ({"file": "analysis.ipynb", "label": "x"}, 400, "bundle only"),
    # Paths the file system cannot take are a 400, never a 500 (issue 14 item 11).
    ({"file": "a\u0000b.txt"}, 400, "control character"),
    ({"notebook": "x\u0000.ipynb", "cell_id": "plot", "output_index": 0}, 400, "control"),
    ({"session_id": "s-bad", "path": "nul\u0000"}, 400, "control character"),
    ({"file": "n" * 256}, 400, "name of 256 bytes"),
    ({"file": "é" * 200}, 400, "name of 400 bytes"),
    ({"file": "d/" * 2100 + "f"}, 400, "over 4096"),
    ({"session_id": "s-bad", "path": "x" * 300}, 400, "name of 300 bytes"),
    ({"file": "\ud800.txt"}, 400, "UTF-8"),
    ({"file": "line\nbreak"}, 400, "control character"),
    # Media types (issue 14 item 9): a control character is refused, never stored.
    (
        {"bundle": {"text/plain\r\nX-Evil: 1": "x"}, "media_type": "text/plain\r\nX-Evil: 1"},
        400,
        "control character",
    ),
    ({"bundle": {"text/plain\nX": "x"}}, 400, "none of"),
    ({"bundle": {"text/plain": "x"}, "media_type": "not a type"}, 400, "not a media type"),
]


@pytest.mark.parametrize(("body", "status", "message"), BAD)
async def test_bad_input_is_4xx_and_writes_nothing(
    server: Server,
    gateway: Any,
    jp_root_dir: Path,
    tmp_path_factory: pytest.TempPathFactory,
    body: dict[str, Any],
    status: int,
    message: str,
) -> None:
    gateway.config.max_artifact_bytes = 4096
    path = make_notebook(jp_root_dir)
    (jp_root_dir / "not-a-notebook.ipynb").write_text("this is { not json")
    (jp_root_dir / "bad-schema.ipynb").write_text(json.dumps({"cells": 5, "nbformat": 4}))
    outside = tmp_path_factory.mktemp("outside")
    make_notebook(outside)
    os.symlink(outside / "analysis.ipynb", jp_root_dir / "link.ipynb")
    work = jp_root_dir / ".resolve" / "sessions" / "s-bad" / "work"
    work.mkdir(parents=True)
    (work / "large.bin").write_bytes(b"\0" * 5000)
    os.symlink(path, work / "escape.txt")
    if body.get("notebook") == "OUTSIDE_ABS":
        body = {**body, "notebook": str(outside / "analysis.ipynb")}
    before = path.read_bytes()
    response = await server.post(
        "/resolve/api/artifacts", json.dumps(body, ensure_ascii=True).encode()
    )
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert message in error["message"], error
    assert store_files(jp_root_dir) == []
    assert path.read_bytes() == before


async def test_unknown_artifact_is_404(server: Server) -> None:
    for path in ("/resolve/api/artifacts/art-000000000000000000000000", "/resolve/api/artifacts/x"):
        for suffix in ("", "/content"):
            response = await server.get(path + suffix)
            assert response.status_code == 404
            assert response.json()["error"]["code"] == "unknown_artifact"


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/resolve/api/artifacts"),
        ("GET", "/resolve/api/artifacts"),
        ("GET", "/resolve/api/artifacts/art-000000000000000000000000"),
        ("GET", "/resolve/api/artifacts/art-000000000000000000000000/content"),
    ],
)
async def test_artifacts_api_needs_jupyter_auth(server: Server, method: str, path: str) -> None:
    async with server.client() as client:
        response = await client.request(method, path, content=b"{}")
        assert response.status_code == 403
        response = await client.request(
            method, path, content=b"{}", headers={"Authorization": "token wrong"}
        )
        assert response.status_code == 403


ACTIVE_TYPES = [
    "TEXT/HTML",
    "text/html; charset=utf-8",
    "Text/Html;charset=UTF-8",
    "image/SVG+XML",
    "application/xhtml+xml",
    "text/xml",
    "application/xml",
    "application/rss+xml",
    "application/mathml+xml",
    "text/xsl",
    "application/javascript",
]


@pytest.mark.parametrize("media_type", ACTIVE_TYPES)
async def test_every_html_xml_or_svg_type_is_normalized_and_only_downloaded(
    server: Server, media_type: str
) -> None:
    payload = "<svg xmlns='http://www.w3.org/2000/svg'><script>alert(1)</script></svg>"
    response = await server.post(
        "/resolve/api/artifacts",
        {"bundle": {media_type: payload, "text/plain": "x"}, "media_type": media_type},
    )
    assert response.status_code == 201, response.text
    stored = response.json()["media_type"]
    assert stored == media_type.split(";")[0].strip().lower()
    content = await server.get(f"/resolve/api/artifacts/{response.json()['id']}/content")
    assert content.status_code == 200
    assert content.headers["content-disposition"].startswith("attachment"), content.headers
    assert content.headers["content-type"].split(";")[0] == stored
    assert content.headers["x-content-type-options"] == "nosniff"


async def test_passive_types_stay_inline_and_bundle_keys_are_matched_normalized(
    server: Server,
) -> None:
    png = base64.b64encode(PNG).decode()
    as_png = await server.post(
        "/resolve/api/artifacts", {"bundle": {"IMAGE/PNG": png}, "media_type": "image/png"}
    )
    assert as_png.status_code == 201, as_png.text
    assert as_png.json()["media_type"] == "image/png"
    content = await server.get(f"/resolve/api/artifacts/{as_png.json()['id']}/content")
    assert content.content == PNG  # decoded as an image, whatever the key's case
    assert content.headers["content-disposition"].startswith("inline")
    text = await server.post("/resolve/api/artifacts", {"bundle": {"Text/Plain": "hi"}})
    assert text.status_code == 201 and text.json()["media_type"] == "text/plain"
    shown = await server.get(f"/resolve/api/artifacts/{text.json()['id']}/content")
    assert shown.headers["content-type"] == "text/plain; charset=utf-8"
    assert shown.headers["content-disposition"].startswith("inline")
    listed = await server.get("/resolve/api/artifacts", params={"media_type": "TEXT/PLAIN"})
    assert [a["id"] for a in listed.json()["artifacts"]] == [text.json()["id"]]


async def test_a_stored_media_type_that_does_not_normalize_is_served_as_bytes(
    server: Server, gateway: Any
) -> None:
    """A manifest written before normalization (CR/LF in its type) answers, not a 500."""
    from jupyter_resolve.artifacts.records import ArtifactManifest as Manifest
    from jupyter_resolve.artifacts.records import Source
    from jupyter_resolve.artifacts.store import _manifest_bytes, atomic_write

    store = gateway.artifacts.store
    manifest, _ = store.promote(b"<script>x</script>", "text/plain", Source(kind="kernel"))
    old = Manifest.model_validate({**manifest.to_json(), "media_type": "text/html\r\nX-Evil: 1"})
    atomic_write(store.manifest_path(manifest.id), _manifest_bytes(old))
    store.reindex()
    content = await server.get(f"/resolve/api/artifacts/{manifest.id}/content")
    assert content.status_code == 200, content.text
    assert content.headers["content-type"] == "application/octet-stream"
    assert content.headers["content-disposition"].startswith("attachment")
    assert "x-evil" not in content.headers
