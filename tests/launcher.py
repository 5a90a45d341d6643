"""The one way tests and the bench start a real ``jupyter server``, and the one ``free_port``.

:class:`JupyterServer` runs ``python -m jupyter_server`` with jupyter_resolve on, in a folder of
its own (``config/``, ``root/``, ``server.log``; a temporary one, removed at the end, when none
is given), on a free loopback port with a random token. Entering it (``with``) starts it and
waits until it is ready; leaving it stops it: SIGTERM, a wait, then SIGKILL to its process group
(it runs in a session of its own and, on Linux, gets SIGTERM if its starter dies first), and
any agent-httpd it reported that outlived it (the runtime has a session of its own too).

The bench imports this module as ``tests.launcher`` (``python -m bench`` runs from the repository
root, as pytest does), so it imports neither pytest nor the test fixtures.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, TypeVar

import httpx

REPO = Path(__file__).resolve().parent.parent
JUPYTER_SERVER = ("-m", "jupyter_server")
# Other server extensions installed here that only slow a start down.
QUIET_EXTENSIONS = {
    name: False for name in ("jupyterlab", "jupyter_lsp", "notebook_shim", "nbclassic")
}
Ready = Literal["listening", "health", "runtime"]
S = TypeVar("S", bound="JupyterServer")


def free_port() -> int:
    """A loopback TCP port nothing listens on now (another process may take it before use)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def runtime_binary() -> str:
    """The native build (the freshest: `make -C native` rebuilds it), else the packaged one."""
    built = REPO / "native" / "build" / "agent-httpd"
    return str(built if built.exists() else REPO / "jupyter_resolve" / "bin" / "agent-httpd")


class ServerError(RuntimeError):
    """The server exited or did not get ready in time; the message ends with its log's tail."""


def _die_with_parent() -> None:
    """preexec_fn: SIGTERM this child when its starter goes away (Linux only)."""
    with contextlib.suppress(Exception):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def start_process(argv: Sequence[str], **kw: Any) -> subprocess.Popen[bytes]:
    """``Popen`` in a session of its own (a terminal's Ctrl-C reaches only the starter, which
    then cleans up), stdin closed, and SIGTERM when the starter dies without cleaning up."""
    preexec = _die_with_parent if sys.platform.startswith("linux") else None
    return subprocess.Popen(
        list(argv), stdin=subprocess.DEVNULL, start_new_session=True, preexec_fn=preexec, **kw
    )


def stop_process(proc: subprocess.Popen[bytes], timeout: float = 10.0) -> None:
    """SIGTERM ``proc``, wait, then SIGKILL its process group (from :func:`start_process`)."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            proc.terminate()
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)


def _is_runtime(pid: int) -> bool:
    try:
        return b"agent-httpd" in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]
    except OSError:
        return False


def kill_if_runtime(pid: int) -> None:
    """Stop ``pid`` only while it is still an agent-httpd (pids get reused)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if not _is_runtime(pid):
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)
        deadline = time.monotonic() + 3
        while _is_runtime(pid) and time.monotonic() < deadline:
            time.sleep(0.05)


class JupyterServer:
    """A ``jupyter server`` process with jupyter_resolve on (see the module's docstring).

    ``workdir``: its folder (``None``: a temporary one, removed on close). ``config``: merged
    into ``config/jupyter_server_config.json`` beside the extension's switch; ``extensions``:
    more ``jpserver_extensions``. ``argv``: more options. ``env``: set over the inherited
    environment, less the variables starting with a ``drop_env`` prefix. ``token_in_env``: the
    token in ``JUPYTER_TOKEN``, not argv (``ps`` shows argv). ``ready``: ``listening``
    (``/api/status`` answers), ``health`` (``/resolve/api/health`` answers 200) or ``runtime``
    (and reports the runtime running). ``module`` and ``ready_signal``, the profiling hook: a
    module that runs jupyter_server under a profiler, and the signal that starts it once ready.
    """

    error: type[Exception] = ServerError  # what start failures raise (the bench: its own)

    def __init__(
        self,
        workdir: Path | None = None,
        *,
        port: int | None = None,
        token: str | None = None,
        token_in_env: bool = False,
        root: Path | None = None,
        base_url: str = "/",
        config: Mapping[str, Any] | None = None,
        extensions: Mapping[str, bool] | None = None,
        argv: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        drop_env: tuple[str, ...] = (),
        cwd: Path | None = None,
        log: Path | None = None,
        runtime: str | Path | None = None,
        own_runtime_dir: bool = True,
        ready: Ready = "listening",
        start_timeout: float = 60.0,
        stop_timeout: float = 20.0,
        module: Sequence[str] = JUPYTER_SERVER,
        ready_signal: int | None = None,
    ) -> None:
        self.workdir, self._own_workdir = workdir, workdir is None
        self._fixed_port = port
        self.port = port or 0
        self.token = token or secrets.token_hex(24)
        self.token_in_env = token_in_env
        self._root = root
        self.base_url = f"/{base_url.strip('/')}/".replace("//", "/")  # /, or /a/b/
        self.config = dict(config or {})
        self.extensions = dict(extensions or {})
        self.argv = list(argv)
        self.env = dict(env or {})
        self.drop_env = drop_env
        self.cwd = cwd
        self._log = log
        self.runtime = str(runtime or runtime_binary())
        self.own_runtime_dir = own_runtime_dir
        self.ready = ready
        self.start_timeout = start_timeout
        self.stop_timeout = stop_timeout
        self.module = list(module)
        self.ready_signal = ready_signal
        self.proc: subprocess.Popen[bytes] | None = None
        self.http: httpx.Client | None = None
        self._runtime_pids: set[int] = set()

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` and the base URL, without a trailing slash."""
        return f"http://127.0.0.1:{self.port}{self.base_url.rstrip('/')}"

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"token {self.token}"}

    @property
    def pid(self) -> int:
        """The ``jupyter server`` process (the gateway runs in it)."""
        if self.proc is None:
            raise self.error("jupyter server is not running")
        return self.proc.pid

    @property
    def root(self) -> Path:
        assert self.workdir is not None, "not started"
        return self._root or self.workdir / "root"

    @property
    def runtime_dir(self) -> Path:
        """Jupyter's runtime dir (kernels' connection files), unless ``own_runtime_dir`` is off."""
        assert self.workdir is not None, "not started"
        return self.workdir / "runtime"

    @property
    def log_path(self) -> Path:
        assert self.workdir is not None, "not started"
        return self._log or self.workdir / "server.log"

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def log_tail(self, lines: int = 30) -> str:
        return "\n".join(self.log_text().splitlines()[-lines:])

    def command(self) -> list[str]:
        """The server's argv: ours first, then :attr:`argv` (a later option wins)."""
        token = [] if self.token_in_env else [f"--IdentityProvider.token={self.token}"]
        return [
            sys.executable,
            *self.module,
            "--no-browser",
            "--allow-root",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={self.port}",
            "--ServerApp.port_retries=0",  # a taken port fails the start; it is retried here
            f"--ServerApp.base_url={self.base_url}",
            f"--ServerApp.root_dir={self.root}",
            *token,
            f"--Resolve.runtime_path={self.runtime}",
            *self.argv,
        ]

    def __enter__(self: S) -> S:
        """Start (unless :meth:`spawn` did) and wait until ready."""
        try:
            if self.proc is None:
                self.spawn()
            self.wait_ready()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def spawn(self: S) -> S:
        """Start the process and return at once: servers spawned one after another start side
        by side, and entering each (``with``) waits until it is ready."""
        if self.workdir is None:
            self.workdir = Path(tempfile.mkdtemp(prefix="resolve-server-"))
        self.root.mkdir(parents=True, exist_ok=True)
        config_dir = self.workdir / "config"
        config_dir.mkdir(parents=True, exist_ok=True)
        switch = {"jpserver_extensions": {"jupyter_resolve": True, **self.extensions}}
        settings = {**self.config, "ServerApp": {**self.config.get("ServerApp", {}), **switch}}
        (config_dir / "jupyter_server_config.json").write_text(json.dumps(settings))
        self.http = httpx.Client(timeout=10.0, headers=self.headers, trust_env=False)
        self._launch()
        return self

    def _environment(self) -> dict[str, str]:
        assert self.workdir is not None
        env = {k: v for k, v in os.environ.items() if not k.startswith(self.drop_env)}
        env["JUPYTER_CONFIG_DIR"] = str(self.workdir / "config")
        if self.own_runtime_dir:
            env["JUPYTER_RUNTIME_DIR"] = str(self.runtime_dir)
        if self.token_in_env:
            env["JUPYTER_TOKEN"] = self.token
        return {**env, **self.env}

    def _launch(self) -> None:
        self.port = self._fixed_port or free_port()
        with open(self.log_path, "ab") as log:
            self.proc = start_process(
                self.command(),
                cwd=self.cwd,
                env=self._environment(),
                stdout=log,
                stderr=subprocess.STDOUT,
            )

    def wait_ready(self) -> None:
        """Wait until the server is ready as :attr:`ready` says; raise :attr:`error` if not."""
        for attempt in range(3):  # a free port can be taken between the probe and the bind
            if self._wait_listening():
                break
            retry = self._fixed_port is None and "already in use" in self.log_tail()
            if attempt == 2 or not retry:
                raise self.error(f"jupyter server exited during start:\n{self.log_tail()}")
            self._launch()
        if self.ready == "health":
            self._wait_health(lambda body: True)
        elif self.ready == "runtime":
            self._wait_health(self._runtime_running)
        if self.ready_signal is not None and self.proc is not None:
            os.kill(self.proc.pid, self.ready_signal)

    def _get(self, path: str) -> httpx.Response:
        assert self.http is not None, "not started"
        return self.http.get(f"{self.url}/{path.lstrip('/')}")

    def _wait_listening(self) -> bool:
        """True once ``/api/status`` answers; False if the server exited first."""
        assert self.proc is not None
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            with contextlib.suppress(httpx.TransportError):
                if self._get("api/status").status_code == 200:
                    return True
            time.sleep(0.05)
        raise self.error(
            f"jupyter server did not answer within {self.start_timeout:g} s:\n{self.log_tail()}"
        )

    def _runtime_running(self, body: dict[str, Any]) -> bool:
        runtime = body.get("runtime") or {}
        if runtime.get("state") == "failed":
            raise self.error(f"the runtime failed: {json.dumps(runtime)}\n{self.log_tail()}")
        return bool(runtime.get("state") == "running" and runtime.get("pid"))

    def _wait_health(self, ready: Callable[[dict[str, Any]], bool]) -> None:
        """Poll the health route until ``ready(body)``; a 404 (no extension) fails at once."""
        deadline = time.monotonic() + self.start_timeout
        last = "no answer"
        while time.monotonic() < deadline:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise self.error(f"jupyter server exited during start:\n{self.log_tail()}")
            try:
                response = self._get("resolve/api/health")
            except httpx.TransportError as exc:
                last = repr(exc)
            else:
                if response.status_code == 404:
                    self._health_body(response)  # raises, saying the extension did not load
                last = f"HTTP {response.status_code}: {response.text[:500]}"
                if response.status_code == 200 and ready(self._health_body(response)):
                    return
            time.sleep(0.1)
        raise self.error(
            f"not ready within {self.start_timeout:g} s ({self.ready}): {last}\n{self.log_tail()}"
        )

    def health(self) -> dict[str, Any]:
        """``/resolve/api/health``'s body (the runtime's pid is kept, to stop it at the end)."""
        return self._health_body(self._get("resolve/api/health"))

    def _health_body(self, response: httpx.Response) -> dict[str, Any]:
        if response.status_code != 200:
            what = (
                "not found: the jupyter_resolve extension did not load or start"
                if response.status_code == 404
                else response.text[:300]
            )
            raise self.error(
                f"GET /resolve/api/health: HTTP {response.status_code}: {what}; server log:"
                f"\n{self.log_tail()}"
            )
        body: dict[str, Any] = response.json()
        pid = (body.get("runtime") or {}).get("pid")
        if isinstance(pid, int):
            self._runtime_pids.add(pid)
        return body

    def runtime_pid(self) -> int:
        pid = (self.health().get("runtime") or {}).get("pid")
        if not isinstance(pid, int):
            raise self.error("/resolve/api/health reports no runtime pid")
        return pid

    def close(self) -> None:
        """Stop the server, then any runtime it reported that outlived it; idempotent."""
        if self.proc is not None:
            stop_process(self.proc, self.stop_timeout)
        for pid in self._runtime_pids:
            kill_if_runtime(pid)
        self._runtime_pids.clear()
        if self.http is not None:
            self.http.close()
            self.http = None
        if self._own_workdir and self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)
            self.workdir = None
