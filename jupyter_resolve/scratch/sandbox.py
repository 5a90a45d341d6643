"""The bubblewrap sandbox of scratch kernels (``c.Resolve.sandbox``: auto, bwrap or none).

Inside: the filesystem read-only; the session workspace (and the kernel's IPC socket folder)
writable; the home, the temporary folders, ``/run/user``, the Jupyter runtime directory (the
server's ``jpserver-<pid>.json`` holds its token), the gateway's state folder and the hidden folders
and files at the top of the server root hidden behind empty read-only mounts, while the Python
installation, the import path and the server root stay readable (a notebook chat's python reads the
person's files there, read-only: kernel_tools/notebook_folder.py). Own PID and IPC namespaces with a
fresh ``/proc``, so agent code sees no other process (no ``/proc/<server>/environ``); no
capabilities, even when the server runs as root; no network unless ``c.Resolve.sandbox_network``.
Kernel messages go over IPC sockets, since the kernel has no loopback to the server. It narrows what
agent code can reach; it is not a boundary against kernel exploits.
"""

from __future__ import annotations

import functools
import logging
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from jupyter_core.paths import jupyter_runtime_dir

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


def _covered(path: Path, readable: set[Path], other: set[Path]) -> bool:
    """``path`` is readable through a readable ancestor with no other mount in between."""
    for above in path.parents:
        if above in other:
            return False
        if above in readable:
            return True
    return False


def _dot_entries(server_root: Path, readable: set[Path]) -> tuple[set[Path], set[Path]]:
    """The hidden folders and files at the top of the server root (``.git``, ``.ssh``, the
    gateway's ``.resolve``), which agent code reading the person's files must not see; a
    folder Python needs (a ``.venv`` holding the installation or the import path) stays."""
    root = server_root.resolve()
    needed = [p for p in readable if p != root and root in p.parents]
    folders: set[Path] = set()
    files: set[Path] = set()
    try:
        entries = list(root.iterdir())
    except OSError:
        return folders, files
    for entry in entries:
        if not entry.name.startswith(".") or entry.is_symlink():
            continue  # a link: bwrap would mount over its target, outside the root maybe
        if entry.is_dir() and not any(p == entry or entry in p.parents for p in needed):
            folders.add(entry)
        elif entry.is_file():
            files.add(entry)
    return folders, files


def bwrap_prefix(
    session: Path,
    server_root: Path,
    network: bool,
    *,
    ipc_dir: Path | None = None,
    state_dir: Path | None = None,
) -> list[str]:
    """The argv that runs a command inside the sandbox."""
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
    readable = _existing_dirs(
        [
            sys.prefix,
            sys.base_prefix,
            server_root,
            Path(__file__).resolve().parents[2],  # kernel_tools
            *sys.path,  # what the server can import (user site, editable installs)
            # context/ stays read-only inside: agent code cannot plant links or swap files
            # there for the gateway to trip over (the gateway trusts nothing there either)
            session / "context",
        ]
    )
    # "/" is mounted read-only first; hiding it (a service user whose home is /) would hide all
    hidden.discard(Path("/"))
    readable.discard(Path("/"))
    hidden_dirs, hidden_files = _dot_entries(server_root, readable)
    hidden |= hidden_dirs
    writable = _existing_dirs([session, *([ipc_dir] if ipc_dir is not None else [])])
    readable = {p for p in readable if not _covered(p, readable, hidden | writable)}
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
    argv += ["--chdir", str(session / "work")]
    if not network:
        argv.append("--unshare-net")
    return [*argv, "--die-with-parent", "--new-session", "--"]
