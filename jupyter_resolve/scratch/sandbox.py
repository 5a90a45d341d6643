"""Optional bubblewrap sandbox for scratch kernels (``c.Resolve.sandbox = "bwrap"``).

Inside: the filesystem read-only, the session workspace writable, the home and the Jupyter
runtime directory hidden (the Python installation and the server root stay readable), and no
network unless ``c.Resolve.sandbox_network``. Kernel messages then go over IPC sockets in the
session folder, since the kernel has no loopback to the server. Same-user limits still apply:
this narrows what agent code can touch, it is not a boundary against a determined attacker.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from jupyter_core.paths import jupyter_runtime_dir


def bwrap_available() -> bool:
    """bwrap is installed and can create the namespaces it needs on this machine."""
    path = shutil.which("bwrap")
    if path is None:
        return False
    probe = [path, "--ro-bind", "/", "/", "--unshare-net", "--dev", "/dev", "true"]
    return subprocess.run(probe, capture_output=True, timeout=10).returncode == 0


def bwrap_prefix(session: Path, server_root: Path, network: bool) -> list[str]:
    """The argv that runs a command inside the sandbox."""
    home = Path(os.path.expanduser("~"))
    argv = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for hidden in (home, Path(jupyter_runtime_dir())):
        if hidden.is_dir():
            argv += ["--tmpfs", str(hidden)]
    readable = {
        Path(sys.prefix),
        Path(sys.base_prefix),
        server_root,
        Path(__file__).resolve().parents[2],
    }
    for path in sorted(readable, key=lambda p: len(p.parts)):
        if path.exists():
            argv += ["--ro-bind", str(path), str(path)]
    argv += ["--bind", str(session), str(session), "--chdir", str(session / "work")]
    if not network:
        argv.append("--unshare-net")
    return [*argv, "--die-with-parent", "--new-session", "--"]
