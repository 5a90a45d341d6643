"""A real PostgreSQL for the hub service's tests: Debian's ``postgresql`` (``make setup``
installs it), a cluster of the tests' own in a temporary folder, on a free loopback port.

The server refuses to run as root (CI runs as root): then the cluster belongs to, and the
server runs as, the ``postgres`` user the package created (else ``nobody``). It runs with
``fsync`` off (a test's data need not survive a crash) and is stopped at the end.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from tests.launcher import free_port

DATABASE = "resolve"
ROLE = "resolve"
INITDB = ("-E", "UTF8", "--no-sync", "--no-instructions")
SERVER = ("-h", "127.0.0.1", "-F", "-c", "max_connections=200")  # -F: no fsync


def pg_bin() -> Path | None:
    """The newest installed server's bin folder (``/usr/lib/postgresql/<version>/bin``)."""
    found = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"),
        key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0,
    )
    return found[-1].parent if found else None


def _account() -> tuple[str, int, int] | None:
    """The user to run the server as, when this process is root."""
    if os.getuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        with contextlib.suppress(KeyError):
            entry = pwd.getpwnam(name)
            return name, entry.pw_uid, entry.pw_gid
    raise RuntimeError("running as root and no 'postgres' or 'nobody' user to run Postgres as")


def _wait_ready(bin_dir: Path, port: int, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while True:
        ready = subprocess.run(
            [str(bin_dir / "pg_isready"), "-h", "127.0.0.1", "-p", str(port), "-U", ROLE],
            capture_output=True,
        )
        if ready.returncode == 0:
            return
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"postgres did not start:\n{log.read_text(errors='replace')}")
        time.sleep(0.2)


@contextlib.contextmanager
def running_postgres() -> Iterator[str]:
    """Start a cluster; yields the URL of an empty database ``resolve`` owned by ``resolve``
    (no password: trust on loopback)."""
    bin_dir = pg_bin()
    if bin_dir is None:
        raise RuntimeError("PostgreSQL is not installed (make setup installs Debian's postgresql)")
    account = _account()
    root = Path(tempfile.mkdtemp(prefix="resolve-pg-"))
    os.chmod(root, 0o755)  # the server's user walks into it
    data, log = root / "data", root / "postgres.log"
    ids = {} if account is None else {"user": account[1], "group": account[2], "extra_groups": []}
    if account is not None:
        os.chown(root, account[1], account[2])
    port = free_port()
    proc: subprocess.Popen[bytes] | None = None
    try:
        subprocess.run(
            [str(bin_dir / "initdb"), "-D", str(data), "-U", ROLE, "-A", "trust", *INITDB],
            check=True,
            capture_output=True,
            **ids,  # type: ignore[arg-type]
        )
        with open(log, "wb") as out:
            proc = subprocess.Popen(
                [
                    str(bin_dir / "postgres"),
                    "-D",
                    str(data),
                    "-p",
                    str(port),
                    "-k",
                    str(root),
                    *SERVER,
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                **ids,  # type: ignore[arg-type]
            )
        _wait_ready(bin_dir, port, proc, log)
        subprocess.run(
            [str(bin_dir / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", ROLE, DATABASE],
            check=True,
            capture_output=True,
        )
        yield f"postgresql://{ROLE}@127.0.0.1:{port}/{DATABASE}"
    finally:
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGINT)  # fast shutdown
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
        shutil.rmtree(root, ignore_errors=True)
