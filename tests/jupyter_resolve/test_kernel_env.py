"""The kernel connection's wrapper on a real Jupyter gateway (issue 44.6): starting a kernel
there logs its keyword arguments at INFO (jupyter_server's gateway manager), and that line shows
the environment's variable names, never a value of the server's environment (which holds,
under JupyterHub, the hub's API token); the kernel still gets the connection."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.jupyter_resolve.notebook.kernel_gateway import kernel_gateway, run_code, server_in_front

pytestmark = pytest.mark.timeout(300)

HUB_TOKEN = "hub-api-token-5b1e0c7d9a"


def test_a_gateway_kernels_start_logs_names_only(tmp_path: Path) -> None:
    with kernel_gateway(tmp_path / "kg") as gateway:
        server = server_in_front(tmp_path / "server", gateway, {})
        server.env["JUPYTERHUB_API_TOKEN"] = HUB_TOKEN  # as a hub's spawner sets it
        with server:
            assert server.http is not None
            started = server.http.post(
                f"{server.url}/api/kernels", json={"name": "python3"}, timeout=120
            )  # the kernels API passes no env: the wrapper's own is all the manager gets
            assert started.status_code == 201, started.text
            kernel_id = started.json()["id"]
            names = "sorted(k for k in __import__('os').environ if 'RESOLVE' in k)"
            seen = run_code(server, kernel_id, names).results
            assert seen == ["['KERNEL_RESOLVE_TOKEN', 'KERNEL_RESOLVE_URL']"]
            log = server.log_text()
    line = next(t for t in log.splitlines() if "GatewayKernelManager started kernel" in t)
    assert "'env': <environment: KERNEL_RESOLVE_TOKEN, KERNEL_RESOLVE_URL>" in line, line
    assert HUB_TOKEN not in log
