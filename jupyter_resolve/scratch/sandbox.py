"""The bubblewrap sandbox of scratch kernels (``c.Resolve.sandbox``: auto, bwrap or none).

Inside: the filesystem read-only; the session workspace (and the kernel's IPC socket folder)
writable; the home, the temporary folders, ``/run/user``, the Jupyter runtime directory (the
server's ``jpserver-<pid>.json`` holds its token) and the gateway's state folder hidden behind
empty read-only mounts, while the Python installation and the import path stay readable. The server
root follows the caller's permissions (DESIGN 10.1): mounted read-only, every hidden folder and file
in it emptied at any depth, only for a run whose caller may read contents (a notebook chat's python
reads the person's files there: kernel_tools/notebook_folder.py); for any other, left out. Own PID
and IPC namespaces with a fresh ``/proc``, so agent code sees no other process (no
``/proc/<server>/environ``); no capabilities, even when the server runs as root; no network unless
``c.Resolve.sandbox_network``.
Kernel messages go over IPC sockets, since the kernel has no loopback to the server. It narrows what
agent code can reach; it is not a boundary against kernel exploits.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from jupyter_core.paths import jupyter_runtime_dir

from .kernelspec import SandboxedKernelManager, ScratchKernelUnavailable

SANDBOXED_LABEL = "sandboxed"
UNSANDBOXED_LABEL = "unsandboxed: agent code runs as you"
GATEWAY_LABEL = "on the cluster: its isolation applies"  # the gateway's, not bubblewrap

# One flag list for the probe and the real thing, so "available" means "these flags work here".
NAMESPACES = ["--unshare-pid", "--unshare-ipc", "--cap-drop", "ALL"]


@functools.cache
def bwrap_available() -> bool:
    """bwrap is installed and can create the namespaces it needs on this machine (probed once
    per process: the answer does not change while the server runs)."""
    path = shutil.which("bwrap")
    if path is None:
        return False
    probe = [
        path,
        *("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"),
        *NAMESPACES,
        "--unshare-net",
        "true",
    ]
    try:
        done = subprocess.run(probe, capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def effective_sandbox(setting: str, log: logging.Logger) -> str:
    """``c.Resolve.sandbox`` → what scratch kernels use: ``"bwrap"`` or ``""`` (none).

    ``auto`` is bwrap where it works, else none; ``""`` (old configs) means none. An explicit
    ``bwrap`` that cannot work stays ``bwrap``: kernels then fail to start rather than run
    unsandboxed against what the admin asked for.
    """
    if setting == "bwrap":
        if not bwrap_available():
            log.error(
                "jupyter-resolve: sandbox = 'bwrap' but bubblewrap cannot create its namespaces "
                "here; scratch kernels will not start (install bubblewrap, or set "
                "c.Resolve.sandbox = 'none')"
            )
        return "bwrap"
    if setting == "auto":
        if bwrap_available():
            log.info("jupyter-resolve: scratch kernels run sandboxed (bubblewrap)")
            return "bwrap"
        log.warning(
            "jupyter-resolve: bubblewrap is not available here; scratch kernels run "
            "UNSANDBOXED, as the server's user (set c.Resolve.sandbox = 'none' to silence this)"
        )
        return ""
    return ""


def describe(effective: str) -> dict[str, str]:
    """The ``sandbox`` entry of ``/resolve/api/health``."""
    if effective == "bwrap":
        return {"kind": "bwrap", "label": SANDBOXED_LABEL}
    if effective == "gateway":  # scratch kernels on the cluster (remote.py)
        return {"kind": "gateway", "label": GATEWAY_LABEL}
    return {"kind": "none", "label": UNSANDBOXED_LABEL}


def _existing_dirs(paths: list[Path | str]) -> set[Path]:
    found = set()
    for path in paths:
        if not path:
            continue
        resolved = Path(path).resolve()
        if resolved.is_dir():
            found.add(resolved)
    return found


def _within(path: Path, folders: set[Path]) -> bool:
    return any(path == folder or folder in path.parents for folder in folders)


def _covered(path: Path, readable: set[Path], other: set[Path]) -> bool:
    """``path`` is readable through a readable ancestor with no other mount in between."""
    for above in path.parents:
        if above in other:
            return False
        if above in readable:
            return True
    return False


MAX_WALKED_FOLDERS = 20_000
"""Folders of the server root looked through for hidden entries at a kernel's start; past it,
the root is not mounted at all (the bound of a walk that could miss a hidden file)."""

MAX_HIDDEN_ENTRIES = 4_000
"""Hidden entries masked one by one (each a few argv words); past it, the root is not mounted."""


def _hidden_in_root(
    root: Path, keep: set[Path], python: set[Path]
) -> tuple[set[Path], set[Path]] | None:
    """The hidden folders and files at any depth of the server root (``.git``, ``.ssh``,
    ``proj/.git``, ``a/b/.env``, the gateway's ``.resolve``), which agent code reading the
    person's files must not see, as ``/api/contents`` does not show them; links are not
    followed (bwrap would mount over their targets). A hidden folder Python needs (a ``.venv``
    holding the installation or the import path: ``python``) stays; folders in ``keep``
    (mounted on their own: the session, the state folder) are not looked into. None when the
    walk passes its bounds."""
    needed = [p for p in python if root in p.parents]
    folders: set[Path] = set()
    files: set[Path] = set()
    pending, walked = [root], 0
    while pending:
        walked += 1
        if walked > MAX_WALKED_FOLDERS or len(folders) + len(files) > MAX_HIDDEN_ENTRIES:
            return None
        try:
            with os.scandir(pending.pop()) as listing:
                entries = list(listing)
        except OSError:  # unreadable to the server: unreadable inside the sandbox too
            continue
        for entry in entries:
            path = Path(entry.path)
            if path in keep or entry.is_symlink():
                continue
            is_dir = entry.is_dir(follow_symlinks=False)
            if not entry.name.startswith("."):
                if is_dir:
                    pending.append(path)
            elif not is_dir:
                files.add(path)
            elif not any(path in p.parents for p in needed):
                folders.add(path)
    return folders, files


def _root_mounts(
    root: Path,
    reads_root: bool,
    mounted: set[Path],
    python: set[Path],
    log: logging.Logger | None,
) -> tuple[set[Path], set[Path]]:
    """What to hide of the server root (folders emptied, files emptied): the root itself for a
    run whose caller may not read contents (DESIGN 10.1), else its hidden entries."""
    if reads_root:
        found = _hidden_in_root(root, mounted, python)
        if found is not None:
            return found
        if log is not None:
            log.warning(
                "jupyter-resolve: the server root %s has more than %d folders or %d hidden "
                "entries: scratch kernels do not mount it (agent code cannot read it)",
                root,
                MAX_WALKED_FOLDERS,
                MAX_HIDDEN_ENTRIES,
            )
    return {root}, set()


def _mount_argv(
    hidden: set[Path], readable: set[Path], writable: set[Path], hidden_files: set[Path]
) -> list[str]:
    """bubblewrap's mounts: the file system read-only, ``hidden`` folders emptied, ``readable``
    ones put back read-only, ``writable`` ones writable, ``hidden_files`` emptied."""
    # Mounts apply in order, so sort by depth: a hidden folder empties everything under it, then
    # a deeper readable or writable one is put back (the server root inside the home, the
    # session inside the hidden state folder), while a hidden folder inside a readable one (the
    # runtime directory inside a server root that is the home) is hidden after it. At equal
    # depth: hide, then bind, then bind writable.
    mounts = sorted(
        [(p, 0) for p in hidden] + [(p, 1) for p in readable] + [(p, 2) for p in writable],
        key=lambda item: (len(item[0].parts), item[1], str(item[0])),
    )
    argv = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", *NAMESPACES]
    for path, kind in mounts:
        if kind == 0:
            argv += ["--tmpfs", str(path)]
        elif kind == 1:
            argv += ["--ro-bind", str(path), str(path)]
        else:
            argv += ["--bind", str(path), str(path)]
    # Empty and read-only: a write there fails rather than vanish with the sandbox. Only the
    # tmpfs itself is remounted; the binds inside keep their own modes.
    for path in sorted(hidden):
        argv += ["--remount-ro", str(path)]
    for path in sorted(hidden_files):  # emptied: a dot-file reads as nothing
        argv += ["--ro-bind", "/dev/null", str(path)]
    return argv


def bwrap_prefix(
    session: Path,
    server_root: Path,
    network: bool,
    *,
    reads_root: bool,
    ipc_dir: Path | None = None,
    state_dir: Path | None = None,
    log: logging.Logger | None = None,
) -> list[str]:
    """The argv that runs a command inside the sandbox; the server root is mounted (read-only,
    without its hidden entries) only when ``reads_root``: the run's caller may read contents."""
    hidden = _existing_dirs(
        [
            os.path.expanduser("~"),
            jupyter_runtime_dir(),
            tempfile.gettempdir(),
            "/tmp",
            "/var/tmp",
            "/run/user",
            *([state_dir] if state_dir is not None else []),
        ]
    )
    installation = _existing_dirs(
        [
            sys.prefix,
            sys.base_prefix,
            Path(__file__).resolve().parents[2] / "kernel_tools",  # on the PYTHONPATH
            session,
        ]
    )
    readable = _existing_dirs(
        [
            *installation,
            *sys.path,  # what the server can import (user site, editable installs)
            # context/ stays read-only inside: agent code cannot plant links or swap files
            # there for the gateway to trip over (the gateway trusts nothing there either)
            session / "context",
        ]
    )
    # "/" is mounted read-only first; hiding it (a service user whose home is /) would hide all
    hidden.discard(Path("/"))
    readable.discard(Path("/"))
    root = server_root.resolve()
    writable = _existing_dirs([session, *([ipc_dir] if ipc_dir is not None else [])])
    mounted = hidden | readable | writable
    hidden_dirs, hidden_files = _root_mounts(root, reads_root, mounted, readable, log)
    reads_root = root not in hidden_dirs  # a root too big to walk is left out
    if not reads_root and root == Path("/"):
        raise ScratchKernelUnavailable(
            "scratch kernels: the server root is /, which the sandbox cannot leave out for a "
            "run whose caller may not read contents"
        )
    if reads_root:
        readable.add(root)
    else:  # of the root, only the Python installation and the session are put back
        readable = {p for p in readable if root not in p.parents or _within(p, installation)}
        readable.discard(root)
    readable -= writable
    hidden |= hidden_dirs
    readable = {p for p in readable if not _covered(p, readable, hidden | writable)}
    argv = _mount_argv(hidden, readable, writable, hidden_files)
    argv += ["--chdir", str(session / "work")]
    if not network:
        argv.append("--unshare-net")
    return [*argv, "--die-with-parent", "--new-session", "--"]


async def sandboxed_manager(
    kernel_name: str,
    session: Path,
    server_root: Path,
    network: bool,
    *,
    reads_root: bool,
    state_dir: Path | None,
    log: logging.Logger,
) -> tuple[SandboxedKernelManager, Path]:
    """A kernel manager that launches under bubblewrap, and the private folder of its sockets
    and connection file (the caller removes it)."""
    manager = SandboxedKernelManager(kernel_name=kernel_name, transport="ipc")
    if manager.kernel_spec is not None:  # the spec is loaded once and kept
        manager.kernel_spec.interrupt_mode = "message"
    # A short private folder for the sockets: a socket path has at most 107 bytes, which a
    # session folder under a deep server root can exceed.
    ipc_dir = Path(tempfile.mkdtemp(prefix="resolve-ipc-"))
    manager.ip = str(ipc_dir / "k")
    # The connection file too: the gateway writes it, and in the session folder agent code
    # could have put a link where it goes.
    manager.connection_file = str(ipc_dir / "kernel.json")
    prefix = functools.partial(
        bwrap_prefix,
        session,
        server_root,
        network,
        reads_root=reads_root,
        ipc_dir=ipc_dir,
        state_dir=state_dir,
        log=log,
    )
    try:  # in a thread: it walks the server root for hidden entries
        manager.sandbox_prefix = await asyncio.to_thread(prefix)
    except BaseException:
        shutil.rmtree(ipc_dir, ignore_errors=True)
        raise
    return manager, ipc_dir
