"""A real ``jupyter server`` process with the extension, for tests that drive kernels against it
(a kernel cannot share the test's event loop with an in-process server)."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from tests.launcher import QUIET_EXTENSIONS, JupyterServer


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
    home = tmp_path / "home"
    home.mkdir(parents=True, exist_ok=True)
    with JupyterServer(
        tmp_path,
        base_url=base_url,
        extensions=QUIET_EXTENSIONS,
        argv=args,
        env={"HOME": str(home)},
        drop_env=("JUPYTER_RESOLVE_",),
        ready="health",
    ) as server:
        assert server.proc is not None
        url, runtime_dir = server.url + "/", server.runtime_dir
        yield RunningServer(
            url, server.token, server.root, home, runtime_dir, server.proc, server.log_path
        )
