"""A real ``jupyter server`` process with the extension, for tests that drive kernels against it
(a kernel cannot share the test's event loop with an in-process server)."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from tests.conftest import runtime_binary
from tests.jupyter_resolve.test_server_process import free_port

# Other server extensions installed here only slow the start down.
QUIET = {name: False for name in ("jupyterlab", "jupyter_lsp", "notebook_shim", "nbclassic")}


@dataclass
class RunningServer:
    url: str  # with base_url and a trailing slash
    token: str  # the Jupyter token (set by hand in a kernel's environment, it works too)
    root: Path
    home: Path
    runtime_dir: Path
    proc: subprocess.Popen[bytes]
    log: Path

    def kernel_env(self) -> dict[str, str]:
        """An environment for a kernel the test starts itself, pointing at this server."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER_RESOLVE_")}
        return {**env, "JUPYTER_RESOLVE_URL": self.url, "JUPYTER_RESOLVE_TOKEN": self.token}

    def execute(self, notebook: Any, timeout: int = 180) -> Any:
        """Run ``notebook`` headless with nbclient in a kernel started here, connected to this
        server by hand (kernels the server starts inherit JUPYTER_RESOLVE_* instead)."""
        from nbclient import NotebookClient

        client = NotebookClient(
            notebook,
            timeout=timeout,
            kernel_name="python3",
            resources={"metadata": {"path": str(self.root)}},
        )
        client.execute(env=self.kernel_env())
        return notebook

    def get(self, path: str) -> httpx.Response:
        headers = {"Authorization": f"token {self.token}"}
        return httpx.get(self.url + path, headers=headers, timeout=30, trust_env=False)

    def run_log(self, run_id: str) -> list[dict[str, object]]:
        path = self.root / ".resolve" / "runs" / f"{run_id}.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()]


@contextlib.contextmanager
def running_server(tmp_path: Path, *args: str, base_url: str = "/") -> Iterator[RunningServer]:
    port, token = free_port(), secrets.token_hex(16)
    home, root, config = tmp_path / "home", tmp_path / "root", tmp_path / "config"
    for folder in (home, root, config):
        folder.mkdir(parents=True, exist_ok=True)
    (config / "jupyter_server_config.json").write_text(
        json.dumps({"ServerApp": {"jpserver_extensions": {"jupyter_resolve": True, **QUIET}}})
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER_RESOLVE_")}
    env.update(
        JUPYTER_CONFIG_DIR=str(config),
        JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"),
        HOME=str(home),
    )
    log = tmp_path / "server.log"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyter_server",
            "--no-browser",
            "--allow-root",
            f"--port={port}",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.base_url={base_url}",
            f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={root}",
            f"--Resolve.runtime_path={runtime_binary()}",
            *args,
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=open(log, "wb"),
    )
    prefix = "/" + base_url.strip("/")
    url = f"http://127.0.0.1:{port}{prefix.rstrip('/')}/"
    server = RunningServer(url, token, root, home, tmp_path / "runtime", proc, log)
    deadline = time.monotonic() + 60
    while True:
        assert proc.poll() is None, log.read_text()
        try:
            if server.get("resolve/api/health").status_code == 200:
                break
        except httpx.HTTPError:
            pass
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.2)
    try:
        yield server
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
