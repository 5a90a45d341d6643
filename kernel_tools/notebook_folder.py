"""A notebook chat's scratch kernel reads the person's files by the paths their notebook uses
(DESIGN 5): the gateway binds the kernel to the notebook's folder (its cwd), and writes go to the
session's ``work/`` only.

Sandboxed (bubblewrap), the server root is mounted read-only, so a write beside the notebook
fails in the kernel itself; hidden folders and the gateway's state (other sessions, run logs)
are not mounted. The audit hook here adds, in both modes, a refusal that says where to write
instead, and refuses reading hidden paths of the server root (``.resolve/`` above all) while
bound. Unsandboxed it is all there is, and it is best effort: it sees Python's own file calls,
not a subprocess, ctypes or a C extension writing by itself.
"""

from __future__ import annotations

import errno
import os
import sys
from typing import Any

from .paths import within

# Audit events that change the file system: the positions of their path arguments.
_WRITES: dict[str, tuple[int, ...]] = {
    "os.remove": (0,),
    "os.rename": (0, 1),
    "os.mkdir": (0,),
    "os.rmdir": (0,),
    "os.chmod": (0,),
    "os.chown": (0,),
    "os.symlink": (1,),
    "os.link": (1,),
    "os.truncate": (0,),
    "os.utime": (0,),
    "shutil.rmtree": (0,),
    "shutil.copyfile": (1,),
    "shutil.copytree": (1,),
    "shutil.move": (1,),
}
_READS = frozenset({"os.listdir", "os.scandir", "glob.glob"})
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


class _Binding:
    """What the hook checks against; ``folder`` None: not bound, the hook does nothing."""

    folder: str | None = None
    root = ""  # the server root, real path
    session = ""  # the session folder, real path
    writable: tuple[str, ...] = ()  # work/, home/, tmp/ of the session
    python: tuple[str, ...] = ()  # the installation and import path: read as ever


_binding = _Binding()
_hooked = False


def bind(session_dir: str, server_root: str, folder: str | None) -> str:
    """Make ``folder`` (a notebook's folder, absolute) the cwd with the person's files read-only,
    or, with None, ``work/`` as before; the new cwd."""
    global _hooked
    session = os.path.realpath(session_dir)
    work = os.path.join(session, "work")
    target = work if folder is None else os.path.realpath(folder)
    if not os.path.isdir(target):  # a kernel elsewhere, a folder the sandbox hides
        print(f"[the notebook's folder {folder} is not reachable here: python runs in {work}]")
        target, folder = work, None
    _binding.root = os.path.realpath(server_root)
    _binding.session = session
    _binding.writable = tuple(os.path.join(session, part) for part in ("work", "home", "tmp"))
    _binding.python = _python_folders(_binding.root)
    _binding.folder = None if folder is None else target
    if not _hooked:
        sys.addaudithook(_audit)  # cannot be removed; unbound, it returns at once
        _hooked = True
    os.chdir(target)
    return target


def _python_folders(root: str) -> tuple[str, ...]:
    """Where Python imports from (a ``.venv`` in the server root, say), the root and the folders
    above it left out: the hidden-path rule must not stop an import."""
    found = []
    for entry in {sys.prefix, sys.base_prefix, sys.exec_prefix, *sys.path}:
        if entry and os.path.isdir(entry):
            real = os.path.realpath(entry)
            if not within(real, root):
                found.append(real)
    return tuple(found)


def _refuse_write(path: str) -> None:
    work = _binding.writable[0]
    raise PermissionError(
        errno.EROFS,
        f"the person's files are read-only to you; write what you make under {work}/",
        path,
    )


def _hidden(real: str) -> bool:
    """Below the server root, a part of the path (the root itself excluded) starts with '.'."""
    if not within(_binding.root, real) or within(_binding.session, real):
        return False
    if any(within(folder, real) for folder in _binding.python):
        return False
    rel = os.path.relpath(real, _binding.root)
    return any(part.startswith(".") and part not in (".", "..") for part in rel.split(os.sep))


def _check_write(path: Any) -> None:
    if isinstance(path, int) or path is None:
        return  # a file descriptor: checked when it was opened
    real = os.path.realpath(os.fsdecode(path))
    if any(within(folder, real) for folder in _binding.writable):
        return
    if within(_binding.root, real) or within(_binding.session, real):
        _refuse_write(os.fsdecode(path))


def _check_read(path: Any) -> None:
    if isinstance(path, int) or path is None:
        return
    text = os.fsdecode(path)
    if _hidden(os.path.realpath(text)):
        raise PermissionError(errno.EACCES, "hidden files and folders are not readable", text)


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _binding.folder is None:
        return
    if event == "open":
        path, mode, flags = (*args, None, None, None)[:3]
        writes = any(c in mode for c in "wax+") if isinstance(mode, str) else None
        if writes is None:
            writes = isinstance(flags, int) and bool(flags & _WRITE_FLAGS)
        if writes:
            _check_write(path)
        else:
            _check_read(path)
    elif event in _WRITES:
        for position in _WRITES[event]:
            if position < len(args):
                _check_write(args[position])
    elif event in _READS and args:
        _check_read(args[0] if args[0] is not None else ".")


def load_snapshot(path: str) -> Any:
    """The value of a snapshot_variable file: Parquet as a pandas frame, ``.npy`` as an array
    (no pickles inside), anything else unpickled (the gateway wrote it from the person's own
    kernel)."""
    if path.endswith(".parquet"):
        import pandas  # type: ignore[import-untyped]

        return pandas.read_parquet(path)
    if path.endswith(".npy"):
        import numpy

        return numpy.load(path, allow_pickle=False)
    import pickle

    with open(path, "rb") as handle:
        return pickle.load(handle)
