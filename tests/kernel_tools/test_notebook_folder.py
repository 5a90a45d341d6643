"""kernel_tools.notebook_folder without a sandbox: bound to a notebook's folder, Python's own file
calls cannot change the person's files or read hidden ones, and work/ stays writable. Each case
runs in a fresh interpreter, since an audit hook stays for the life of its process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

ATTEMPTS = """
import os, shutil, sys
from kernel_tools.notebook_folder import bind
print('cwd', bind(sys.argv[1], sys.argv[2], sys.argv[3]))
steps = {
    'read': lambda: open('data.csv').read(),
    'open-w': lambda: open('new.txt', 'w'),
    'os.open': lambda: os.open('new.txt', os.O_WRONLY | os.O_CREAT),
    'remove': lambda: os.remove('data.csv'),
    'rename': lambda: os.rename('data.csv', 'moved.csv'),
    'mkdir': lambda: os.mkdir('made'),
    'copy-out': lambda: shutil.copy('data.csv', 'copy.csv'),
    'hidden': lambda: open('../.secret/key').read(),
    'hidden-list': lambda: os.listdir('../.secret'),
    'work': lambda: open(os.path.join(sys.argv[1], 'work', 'out.txt'), 'w').write('ok'),
    'outside': lambda: open(os.path.join(sys.argv[4], 'free.txt'), 'w').write('ok'),
}
for name, step in steps.items():
    try:
        step()
        print(name, 'done')
    except OSError as exc:
        print(name, 'refused', exc.errno)
"""


@pytest.fixture
def person(tmp_path: Path) -> tuple[Path, Path, Path]:
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "data.csv").write_text("a\n1\n")
    (root / ".secret").mkdir()
    (root / ".secret" / "key").write_text("k")
    session = root / ".resolve" / "sessions" / "s1"
    for part in ("work", "context", "home", "tmp"):
        (session / part).mkdir(parents=True)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    return root, session, outside


def attempt(root: Path, session: Path, folder: Path, outside: Path) -> dict[str, str]:
    argv = [sys.executable, "-c", ATTEMPTS, str(session), str(root), str(folder), str(outside)]
    done = subprocess.run(argv, capture_output=True, text=True, cwd=REPO, check=True, timeout=60)
    lines = [line.split(" ", 1) for line in done.stdout.splitlines()]
    return {name: rest for name, rest in lines}


def test_bound_the_persons_files_are_read_only_and_hidden_ones_unreadable(
    person: tuple[Path, Path, Path],
) -> None:
    root, session, outside = person
    seen = attempt(root, session, root / "sub", outside)
    assert seen["cwd"] == str((root / "sub").resolve())
    assert seen["read"] == "done" and seen["work"] == "done" and seen["outside"] == "done"
    for name in ("open-w", "os.open", "remove", "rename", "mkdir", "copy-out"):
        assert seen[name] == "refused 30", name  # EROFS, as the sandbox's mount says it
    assert seen["hidden"] == "refused 13" and seen["hidden-list"] == "refused 13"
    assert sorted(p.name for p in (root / "sub").iterdir()) == ["data.csv"]
    assert (session / "work" / "out.txt").read_text() == "ok"


def test_a_folder_the_kernel_cannot_see_leaves_it_in_work(
    person: tuple[Path, Path, Path],
) -> None:
    root, session, outside = person
    seen = attempt(root, session, root / "gone", outside)
    assert seen["[the"].startswith("notebook's folder") and seen["cwd"] == str(
        (session / "work").resolve()
    )
    assert seen["open-w"] == "done"  # not bound: nothing is refused, as before
