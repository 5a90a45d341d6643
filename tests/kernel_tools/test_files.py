from __future__ import annotations

import os
from pathlib import Path

from kernel_tools.files import edit_file, list_dir, read_file, search_files, write_file
from kernel_tools.paths import Workspace


def test_read_file(ws: Workspace, work: Path) -> None:
    (work / "notes.txt").write_text("one\ntwo\nthree\n")
    assert read_file(ws, "notes.txt").output == "one\ntwo\nthree\n"
    result = read_file(ws, "notes.txt", offset=2, limit=1)
    assert result.ok
    assert result.output == "two\n\n[lines 2-2 of 3 shown; offset=3 reads on]"
    assert read_file(ws, "notes.txt", offset=3).output == "three\n"
    assert not read_file(ws, "notes.txt", offset=9).ok


def test_read_file_context_is_allowed(ws: Workspace) -> None:
    result = read_file(ws, "context/input.txt")
    assert result.ok and result.output == "alpha\nbeta\n"


def test_read_file_errors(ws: Workspace, work: Path) -> None:
    missing = read_file(ws, "notes.txt")
    assert not missing.ok
    assert missing.output == "read_file: 'notes.txt' does not exist in the workspace (work/)"
    (work / "dir").mkdir()
    assert "is a directory" in read_file(ws, "dir").output
    (work / "blob.bin").write_bytes(b"\x89PNG\x00\x01")
    assert "is a binary file" in read_file(ws, "blob.bin").output
    assert "absolute path" in read_file(ws, "/etc/passwd").output
    assert "leaves the session workspace" in read_file(ws, "../../x").output


def test_read_file_replaces_bad_utf8_and_truncates(ws: Workspace, work: Path) -> None:
    (work / "latin.txt").write_bytes(b"caf\xe9\n")
    assert read_file(ws, "latin.txt").output == "caf\ufffd\n"
    (work / "big.txt").write_text("x" * 25_000)
    output = read_file(ws, "big.txt").output
    assert output == "x" * 20_000 + "\n[output truncated: 20000 of 25000 characters shown]"


def test_read_file_symlink_escape(ws: Workspace, work: Path, tmp_path: Path) -> None:
    (tmp_path / "secret").write_text("s3cret")
    (work / "link").symlink_to(tmp_path / "secret")
    result = read_file(ws, "link")
    assert not result.ok and "symlink" in result.output and "s3cret" not in result.output


def test_write_file(ws: Workspace, work: Path) -> None:
    result = write_file(ws, "a/b/c.txt", "héllo")
    assert result.ok and result.output == "wrote 6 bytes to a/b/c.txt"
    assert (work / "a" / "b" / "c.txt").read_text() == "héllo"
    (work / "a" / "b" / "c.txt").chmod(0o640)
    assert write_file(ws, "a/b/c.txt", "bye").ok
    assert (work / "a" / "b" / "c.txt").read_text() == "bye"
    assert (work / "a" / "b" / "c.txt").stat().st_mode & 0o777 == 0o640
    assert os.listdir(work / "a" / "b") == ["c.txt"]  # no temp file left behind


def test_write_file_refusals(ws: Workspace, work: Path, session: Path) -> None:
    refused = write_file(ws, "context/input.txt", "x")
    assert not refused.ok and "context/, which is read-only" in refused.output
    assert (session / "context" / "input.txt").read_text() == "alpha\nbeta\n"
    assert not write_file(ws, "context/new.txt", "x").ok
    assert not (session / "context" / "new.txt").exists()
    assert "absolute" in write_file(ws, "/tmp/x", "x").output
    assert "leaves" in write_file(ws, "../../x", "x").output
    (work / "d").mkdir()
    assert "is a directory" in write_file(ws, "d", "x").output


def test_edit_file(ws: Workspace, work: Path) -> None:
    (work / "f.py").write_text("a = 1\nb = 2\nb = 2\n")
    result = edit_file(ws, "f.py", "a = 1", "a = 10")
    assert result.ok and result.output == "replaced 1 occurrence in f.py at line 1"
    assert (work / "f.py").read_text() == "a = 10\nb = 2\nb = 2\n"
    ambiguous = edit_file(ws, "f.py", "b = 2", "b = 3")
    assert not ambiguous.ok and "ambiguous: found 2 times" in ambiguous.output
    absent = edit_file(ws, "f.py", "zzz", "y")
    assert not absent.ok and "was not found" in absent.output
    assert (work / "f.py").read_text() == "a = 10\nb = 2\nb = 2\n"
    assert edit_file(ws, "f.py", "b = 2\nb = 2", "b = 4").ok
    assert (work / "f.py").read_text() == "a = 10\nb = 4\n"


def test_edit_file_refusals(ws: Workspace, work: Path) -> None:
    refused = edit_file(ws, "context/input.txt", "alpha", "x")
    assert not refused.ok and "read-only" in refused.output
    assert "does not exist" in edit_file(ws, "nope.txt", "a", "b").output
    assert "is empty" in edit_file(ws, "nope.txt", "", "b").output
    (work / "bad.txt").write_bytes(b"caf\xe9")
    assert "not valid UTF-8" in edit_file(ws, "bad.txt", "caf", "x").output


def test_list_dir(ws: Workspace, work: Path) -> None:
    (work / "b.txt").write_text("12345")
    (work / "a").mkdir()
    result = list_dir(ws)
    assert result.ok
    assert result.output == "./ (2 entries)\na/\nb.txt  5 bytes"
    context = list_dir(ws, "context")
    assert context.output == "context/ (1 entries)\ninput.txt  11 bytes"
    assert "is a file" in list_dir(ws, "b.txt").output
    assert "does not exist" in list_dir(ws, "zz").output
    assert "leaves" in list_dir(ws, "../..").output


def test_list_dir_is_bounded(ws: Workspace, work: Path) -> None:
    for index in range(510):
        (work / f"f{index:04d}").write_text("")
    lines = list_dir(ws).output.splitlines()
    assert lines[0] == "./ (510 entries)"
    assert lines[-1] == "[10 more entries not shown]"
    assert len(lines) == 502


def test_search_files(ws: Workspace, work: Path, tmp_path: Path) -> None:
    (work / "src").mkdir()
    (work / "src" / "m.py").write_text("import os\nx = 1\n# TODO fix\n")
    (work / "notes.md").write_text("TODO write\n")
    (work / "img.bin").write_bytes(b"TODO\x00")
    (work / "huge.txt").write_text("TODO\n" * 500_000)
    (tmp_path / "outside.txt").write_text("TODO secret\n")
    (work / "escape.txt").symlink_to(tmp_path / "outside.txt")
    result = search_files(ws, r"TODO \w+")
    assert result.ok
    assert result.output == "notes.md:1: TODO write\nsrc/m.py:3: # TODO fix"
    assert search_files(ws, "TODO", glob="*.py").output == "src/m.py:3: # TODO fix"
    assert search_files(ws, "TODO", path="src").output == "src/m.py:3: # TODO fix"
    assert search_files(ws, "alpha", path="context").output == "context/input.txt:1: alpha"
    none = search_files(ws, "nothing-here")
    assert none.ok and none.output.startswith("no matches for 'nothing-here' under .")
    assert "2 files skipped" in none.output


def test_search_files_bounds_and_errors(ws: Workspace, work: Path) -> None:
    (work / "many.txt").write_text("hit\n" * 50)
    lines = search_files(ws, "hit", max_hits=3).output.splitlines()
    assert lines == [
        "many.txt:1: hit",
        "many.txt:2: hit",
        "many.txt:3: hit",
        "[stopped at max_hits=3; narrow the search for more]",
    ]
    bad = search_files(ws, "(")
    assert not bad.ok and "not a valid regular expression" in bad.output
    assert "does not exist" in search_files(ws, "x", path="nope").output
    assert "leaves" in search_files(ws, "x", path="../../").output
