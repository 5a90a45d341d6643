"""The subprocesses a bench run needs: the fake provider and a real ``jupyter server``.

Both are context managers: they start on ``__enter__``, wait until they answer, and on
``__exit__`` stop what they started (SIGTERM, then SIGKILL), also after Ctrl-C. Children run in
their own session (a terminal's Ctrl-C reaches only the bench, which then cleans up) and, on
Linux, get SIGTERM if the bench dies without cleaning up.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx

from .core import BenchError, runtime_binary
from .profiling import profile_dir, server_module

KEY_ENV = "RESOLVE_BENCH_KEY"  # the gateway reads the provider key from here, not OPENAI_API_KEY


def _die_with_parent() -> None:
    """preexec_fn: SIGTERM this child when the bench process goes away (Linux only)."""
    with contextlib.suppress(Exception):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _spawn(argv: list[str], **kw: Any) -> subprocess.Popen[bytes]:
    preexec = _die_with_parent if sys.platform.startswith("linux") else None
    return subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, start_new_session=True, preexec_fn=preexec, **kw
    )


def stop_process(proc: subprocess.Popen[bytes], timeout: float = 10.0) -> None:
    """SIGTERM ``proc``, wait, then SIGKILL its process group (its own session)."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            proc.terminate()
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _read_line(proc: subprocess.Popen[bytes], timeout: float) -> bytes:
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    return proc.stdout.readline() if ready else b""


def _base_env(repo: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(repo), env.get("PYTHONPATH", "")) if p)
    return env


class FakeProvider:
    """``python -m tests.fakes.openai_server --scenario long --chunks N`` on a loopback port.

    With ``scenario_file`` (a JSON list of replies, see ``tests/fakes/_server.py``) it serves
    that instead.
    """

    model = "fake-model"

    def __init__(
        self,
        repo: Path,
        *,
        chunks: int = 2000,
        start_timeout: float = 20.0,
        scenario_file: Path | None = None,
    ) -> None:
        self.repo = repo
        self.chunks = chunks
        self.start_timeout = start_timeout
        self.scenario_file = scenario_file
        self.port = 0
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def pid(self) -> int:
        if self._proc is None:
            raise BenchError("the fake provider is not running")
        return self._proc.pid

    def __enter__(self) -> FakeProvider:
        argv = [sys.executable, "-m", "tests.fakes.openai_server", "--port", "0"]
        argv += ["--scenario", "long", "--chunks", str(self.chunks)]
        if self.scenario_file is not None:
            argv += ["--scenario-file", str(self.scenario_file)]
        self._proc = _spawn(
            argv, cwd=self.repo, env=_base_env(self.repo), stdout=subprocess.PIPE, stderr=None
        )
        try:
            line = _read_line(self._proc, self.start_timeout)
            try:
                self.port = int(json.loads(line)["port"])
            except (ValueError, KeyError, TypeError) as exc:
                raise BenchError(
                    f"the fake provider did not print its port (got {line[:200]!r}; "
                    f"exit status {self._proc.poll()})"
                ) from exc
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        if self._proc is not None:
            stop_process(self._proc)
            if self._proc.stdout is not None:
                self._proc.stdout.close()
            self._proc = None


class JupyterServer:
    """A ``jupyter server`` with jupyter_resolve on, provider ``openai`` at ``provider_url``.

    Runs in a temporary root with its own config and runtime dirs (the user's Jupyter config is
    not read; the installed system config is), a random token (``JUPYTER_TOKEN``) and a free
    loopback port. Ready when ``/resolve/api/health`` reports the runtime running.
    """

    def __init__(
        self,
        repo: Path,
        provider_url: str,
        *,
        start_timeout: float = 60.0,
        extra_args: tuple[str, ...] = (),
    ) -> None:
        self.extra_args = extra_args
        self.repo = repo
        self.provider_url = provider_url
        self.start_timeout = start_timeout
        self.token = secrets.token_hex(24)
        self.port = 0
        self.tmp: Path | None = None
        self.http: httpx.Client | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._runtime_pids: set[int] = set()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"token {self.token}"}

    @property
    def pid(self) -> int:
        """The gateway: the ``jupyter server`` process the extension runs in."""
        if self._proc is None:
            raise BenchError("jupyter server is not running")
        return self._proc.pid

    def argv(self, root: Path) -> list[str]:
        return [
            sys.executable,
            *server_module("gateway"),  # under cProfile with --profile
            "--allow-root",
            "--no-browser",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={self.port}",
            "--ServerApp.port_retries=0",
            f"--ServerApp.root_dir={root}",
            "--ServerApp.jpserver_extensions=jupyter_resolve=True",
            "--ServerApp.jpserver_extensions=bench.floor_extension=True",  # the floor's no-op
            *self.provider_args(),
            f"--Resolve.runtime_path={runtime_binary(self.repo)}",
            *self.extra_args,
        ]

    def provider_args(self) -> list[str]:
        """The fake OpenAI provider, unless ``extra_args`` name another provider."""
        if any(a.startswith("--Resolve.provider=") for a in self.extra_args):
            return []
        return [
            "--Resolve.provider=openai",
            f"--Resolve.base_url={self.provider_url}",
            f"--Resolve.model={FakeProvider.model}",
            f"--Resolve.api_key_env={KEY_ENV}",
        ]

    def __enter__(self) -> JupyterServer:
        """Start (unless :meth:`spawn` did) and wait until ready."""
        try:
            if self._proc is None:
                self.spawn()
            self._wait_ready()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def spawn(self) -> JupyterServer:
        """Start the process and return at once: servers spawned one after another start
        side by side, and entering each (``with``) waits until it is ready."""
        runtime_binary(self.repo)  # fail early, with the hint, when it is not built
        self.tmp = Path(tempfile.mkdtemp(prefix="resolve-bench-"))
        (self.tmp / "root").mkdir()
        self.http = httpx.Client(timeout=10.0, headers=self.headers)
        self._launch()
        return self

    def _launch(self) -> None:
        assert self.tmp is not None
        env = _base_env(self.repo)
        env["JUPYTER_CONFIG_DIR"] = str(self.tmp / "config")
        env["JUPYTER_RUNTIME_DIR"] = str(self.tmp / "runtime")
        env[KEY_ENV] = "sk-bench-not-a-real-key"
        env["JUPYTER_TOKEN"] = self.token  # the environment, not argv: ps shows argv
        self.port = free_port()
        with open(self.log_path, "ab") as log:
            self._proc = _spawn(
                self.argv(self.tmp / "root"),
                cwd=self.repo,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )

    def _wait_ready(self) -> None:
        for attempt in range(3):  # the free port can be taken between probe and bind
            if self._wait_listening():
                break
            if attempt == 2 or "already in use" not in self.log_tail():
                raise BenchError(f"jupyter server exited during start:\n{self.log_tail()}")
            self._launch()
        self._wait_runtime()
        if profile_dir() is not None and self._proc is not None:
            os.kill(self._proc.pid, signal.SIGUSR2)  # ready: the profile starts here

    @property
    def log_path(self) -> Path:
        assert self.tmp is not None
        return self.tmp / "server.log"

    def log_tail(self, lines: int = 30) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def _wait_listening(self) -> bool:
        """True once ``/api/status`` answers; False if the server exited first."""
        assert self._proc is not None and self.http is not None
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                return False
            with contextlib.suppress(httpx.TransportError):
                if self.http.get(f"{self.url}/api/status").status_code == 200:
                    return True
            time.sleep(0.05)
        raise BenchError(
            f"jupyter server did not answer within {self.start_timeout:g} s:\n{self.log_tail()}"
        )

    def health(self) -> dict[str, Any]:
        assert self.http is not None
        response = self.http.get(f"{self.url}/resolve/api/health")
        if response.status_code != 200:
            what = (
                "not found: the jupyter_resolve extension did not load or start"
                if response.status_code == 404
                else response.text[:300]
            )
            raise BenchError(
                f"GET /resolve/api/health: HTTP {response.status_code}: {what}; server log:"
                f"\n{self.log_tail()}"
            )
        body: dict[str, Any] = response.json()
        pid = (body.get("runtime") or {}).get("pid")
        if isinstance(pid, int):
            self._runtime_pids.add(pid)
        return body

    def _wait_runtime(self) -> None:
        deadline = time.monotonic() + self.start_timeout
        runtime: dict[str, Any] = {}
        while time.monotonic() < deadline:
            runtime = self.health().get("runtime") or {}
            if runtime.get("state") == "running" and runtime.get("pid"):
                return
            if runtime.get("state") == "failed":
                break
            time.sleep(0.1)
        raise BenchError(
            f"the gateway's runtime is not running: {json.dumps(runtime)}\n{self.log_tail()}"
        )

    def runtime_pid(self) -> int:
        pid = (self.health().get("runtime") or {}).get("pid")
        if not isinstance(pid, int):
            raise BenchError("/resolve/api/health reports no runtime pid")
        return pid

    def close(self) -> None:
        if self._proc is not None:
            stop_process(self._proc)
            self._proc = None
        for pid in self._runtime_pids:  # a runtime the server failed to stop (it has its own
            _kill_if_runtime(pid)  # session, so the process-group kill above misses it)
        self._runtime_pids.clear()
        if self.http is not None:
            self.http.close()
            self.http = None
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = None


def _is_runtime(pid: int) -> bool:
    try:
        return b"agent-httpd" in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]
    except OSError:
        return False


def _kill_if_runtime(pid: int) -> None:
    """Stop ``pid`` only while it is still an agent-httpd (pids get reused)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if not _is_runtime(pid):
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)
        deadline = time.monotonic() + 3
        while _is_runtime(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
