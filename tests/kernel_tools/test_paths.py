from __future__ import annotations

import os
from pathlib import Path

import pytest

from kernel_tools.paths import PathError, Workspace


def test_relative_paths_are_under_work(ws: Workspace, work: Path) -> None:
    assert ws.resolve("a/b.txt") == os.path.realpath(work / "a" / "b.txt")
    assert ws.resolve("") == os.path.realpath(work)
    assert ws.resolve("./x/../y") == os.path.realpath(work / "y")


def test_context_addresses_the_context_dir(ws: Workspace, session: Path) -> None:
    assert ws.resolve("context/input.txt") == os.path.realpath(session / "context" / "input.txt")
    assert ws.display(ws.resolve("context/input.txt")) == "context/input.txt"
    assert ws.display(ws.resolve("")) == "."


@pytest.mark.parametrize("path", ["../../x", "../../../etc/passwd", "a/../../../x"])
def test_dotdot_leaving_the_session_is_refused(ws: Workspace, path: str) -> None:
    with pytest.raises(PathError, match=r"leaves the session workspace: '\.\.' may not climb"):
        ws.resolve(path)


def test_dotdot_inside_the_session_is_allowed(ws: Workspace, session: Path) -> None:
    assert ws.resolve("../context/input.txt") == os.path.realpath(session / "context" / "input.txt")


def test_absolute_paths_are_refused(ws: Workspace, work: Path) -> None:
    for path in ("/etc/passwd", str(work / "x")):
        with pytest.raises(PathError, match="is an absolute path"):
            ws.resolve(path)


def test_symlink_leaving_the_session_is_refused(ws: Workspace, work: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    (work / "link").symlink_to(outside)
    (work / "filelink").symlink_to(outside / "secret.txt")
    for path in ("link/secret.txt", "filelink", "link"):
        with pytest.raises(PathError, match="symlink that resolves outside"):
            ws.resolve(path)


def test_symlink_inside_is_followed(ws: Workspace, work: Path) -> None:
    (work / "real.txt").write_text("x")
    (work / "alias.txt").symlink_to(work / "real.txt")
    assert ws.resolve("alias.txt", write=True) == os.path.realpath(work / "real.txt")


def test_writes_refuse_context(ws: Workspace, work: Path, session: Path) -> None:
    for path in ("context/input.txt", "context/new.txt", "context", "../context/x"):
        with pytest.raises(PathError, match="read-only"):
            ws.resolve(path, write=True)
    (work / "ctx").symlink_to(session / "context")
    with pytest.raises(PathError, match="read-only"):
        ws.resolve("ctx/input.txt", write=True)
    with pytest.raises(PathError, match="outside work/"):
        ws.resolve("../elsewhere.txt", write=True)


def test_notebook_paths_are_confined_to_the_server_root(
    ws: Workspace, server_root: Path, tmp_path: Path
) -> None:
    assert ws.resolve_notebook("a/b.ipynb") == os.path.realpath(server_root / "a" / "b.ipynb")
    with pytest.raises(PathError, match="leaves the server root"):
        ws.resolve_notebook("../x.ipynb")
    with pytest.raises(PathError, match="absolute"):
        ws.resolve_notebook("/etc/passwd")
    (server_root / "out").symlink_to(tmp_path)
    with pytest.raises(PathError, match="symlink"):
        ws.resolve_notebook("out/x.ipynb")
