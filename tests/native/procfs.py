"""What another process of the same user can read of a process through /proc.

``look_for(pid, secret, user)`` runs a separate reader process as the same user and reports
which of ``/proc/<pid>/`` it could open and whether ``secret`` was in any of it, memory
included (``maps`` + ``mem``). Root may read any process, so a test run as root starts the
target and the reader as one ordinary user; without a user, a reader run as root drops
CAP_SYS_PTRACE first (on some kernels root still reads ``environ`` then).
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

READER = r"""
import json, os, re, sys

pid, secret = sys.argv[1], sys.stdin.buffer.read()
root = f"/proc/{pid}"
LIMIT = 1 << 20  # per file
SKIP = {"mem", "pagemap", "clear_refs"}  # mem is scanned through maps below
report = {"opened": [], "found": [], "mem": False, "environ": False}


def read(path):
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        return os.read(fd, LIMIT)
    except OSError:
        return None
    finally:
        os.close(fd)


def walk(directory, depth):
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return
    for entry in entries:
        if entry.is_symlink() or entry.name in SKIP or entry.name == "net":
            continue
        if entry.is_dir(follow_symlinks=False):
            if depth < 3:
                walk(entry.path, depth + 1)
            continue
        data = read(entry.path)
        if data is None:
            continue
        report["opened"].append(entry.path[len(root) + 1:])
        if secret in data:
            report["found"].append(entry.path[len(root) + 1:])


walk(root, 0)
report["environ"] = "environ" in report["opened"]
maps = read(f"{root}/maps")
if maps is not None:
    try:
        mem = open(f"{root}/mem", "rb", buffering=0)
    except OSError:
        mem = None
    if mem is not None:
        report["mem"] = True
        budget = 256 << 20
        for line in maps.decode().splitlines():
            m = re.match(r"([0-9a-f]+)-([0-9a-f]+) r", line)
            if not m or budget <= 0:
                continue
            start, end = int(m.group(1), 16), int(m.group(2), 16)
            size = min(end - start, budget)
            budget -= size
            try:
                mem.seek(start)
                if secret in mem.read(size):
                    report["found"].append(f"mem {line}")
            except (OSError, ValueError, OverflowError):
                pass
print(json.dumps(report))
"""

# Becomes the reader. Given a user, switch to it first (everything the reader imports is
# imported before, as an ordinary user may not read this interpreter's files). Run as root
# otherwise, take CAP_SYS_PTRACE out of the bounding set and exec: the program that runs after
# exec, even as root, does not have it.
LAUNCHER = r"""
import ctypes, json, os, re, sys

reader, pid, user = sys.argv[1], sys.argv[2], sys.argv[3]
if user != "-":
    os.setgroups([])
    os.setgid(int(user))
    os.setuid(int(user))
    sys.argv = [sys.argv[0], pid]
    exec(compile(reader, "reader", "exec"))
elif os.geteuid() == 0:
    PR_CAPBSET_DROP, CAP_SYS_PTRACE = 24, 19
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_CAPBSET_DROP, CAP_SYS_PTRACE, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP, CAP_SYS_PTRACE)")
    os.execv(sys.executable, [sys.executable, "-c", reader, pid])
else:
    sys.argv = [sys.argv[0], pid]
    exec(compile(reader, "reader", "exec"))
"""


def look_for(pid: int, secret: str, user: int | None = None) -> dict[str, Any]:
    """What a process of the same user (``user`` when given, else ours) finds of ``secret``
    under /proc/<pid>/ (see the module doc)."""
    who = "-" if user is None else str(user)
    result = subprocess.run(
        [sys.executable, "-c", LAUNCHER, READER, str(pid), who],
        input=secret.encode(),
        capture_output=True,
        timeout=60,
        check=True,
    )
    report: dict[str, Any] = json.loads(result.stdout)
    return report
