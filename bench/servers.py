"""The subprocesses a bench run needs: the fake provider and a real ``jupyter server``.

Both are context managers: they start on ``__enter__``, wait until they answer, and on
``__exit__`` stop what they started (SIGTERM, then SIGKILL), also after Ctrl-C. Both start
through ``tests.launcher`` (the one launcher the tests use too): children run in their own
session (a terminal's Ctrl-C reaches only the bench, which then cleans up) and, on Linux, get
SIGTERM if the bench dies without cleaning up.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
from pathlib import Path
from types import TracebackType

from tests.launcher import JupyterServer as LaunchedServer
from tests.launcher import start_process, stop_process

from .core import BenchError, runtime_binary
from .profiling import profile_dir, server_module

KEY_ENV = "RESOLVE_BENCH_KEY"  # the gateway reads the provider key from here, not OPENAI_API_KEY
# The folders the servers of this run imported jupyter_resolve from (bench/floor_extension.py
# tells), by the root they were started in: a comparison checks each side's against its tree.
LOADED_FROM: dict[str, set[str]] = {}


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
        self._proc = start_process(
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


class JupyterServer(LaunchedServer):
    """A ``jupyter server`` with jupyter_resolve on, provider ``openai`` at ``provider_url``.

    Runs in a temporary root with its own config and runtime dirs (the user's Jupyter config is
    not read; the installed system config is), a random token (``JUPYTER_TOKEN``), a free
    loopback port and the floor's no-op extension. Ready when ``/resolve/api/health`` reports
    the runtime running. Under ``--profile`` it runs under cProfile from that moment on.
    """

    error = BenchError

    def __init__(
        self,
        repo: Path,
        provider_url: str,
        *,
        start_timeout: float = 60.0,
        extra_args: tuple[str, ...] = (),
    ) -> None:
        self.repo = repo
        self.provider_url = provider_url
        self.extra_args = extra_args
        profiling = profile_dir() is not None
        super().__init__(
            token_in_env=True,  # the environment, not argv: ps shows argv
            extensions={"bench.floor_extension": True},  # the floor's no-op
            argv=[*self.provider_args(), *extra_args],
            env={"PYTHONPATH": _base_env(repo)["PYTHONPATH"], KEY_ENV: "sk-bench-not-a-real-key"},
            cwd=repo,
            ready="runtime",
            start_timeout=start_timeout,
            stop_timeout=10.0,
            module=server_module("gateway"),  # under cProfile with --profile
            ready_signal=signal.SIGUSR2 if profiling else None,  # the profile starts there
        )

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

    def spawn(self) -> JupyterServer:
        """Start the process and return at once (see ``tests.launcher``); fail early, with the
        hint, when agent-httpd is not built."""
        self.runtime = str(runtime_binary(self.repo))
        return super().spawn()

    def wait_ready(self) -> None:
        """Ready as the launcher says; then note where it imported jupyter_resolve from."""
        super().wait_ready()
        answer = self._get("resolve-bench/floor")
        where = answer.json().get("jupyter_resolve") if answer.status_code == 200 else None
        if where:
            LOADED_FROM.setdefault(str(self.repo), set()).add(str(where))
