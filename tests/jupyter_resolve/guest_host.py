"""A process that hosts jupyter servers with jupyter_resolve the way other programs do, for
test_guest.py: ``python -m tests.jupyter_resolve.guest_host MODE WORKDIR`` prints one JSON report.

- ``two``: two servers at once, each started (its extension's start hook, the runtime) and
  given a kernel, then both stopped;
- ``quick-stop``: one server stopped while its runtime is being spawned;
- ``no-stop``: one server started and never stopped (the process just exits).
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import sys
from pathlib import Path
from typing import Any

from jupyter_server.serverapp import ServerApp
from traitlets.config import Config

from tests.launcher import QUIET_EXTENSIONS, free_port, runtime_binary

ENV_NAMES = ("JUPYTER_RESOLVE_URL", "JUPYTER_RESOLVE_TOKEN")


def make_server(root: Path) -> ServerApp:
    """A server made in this process (not the ``ServerApp.instance()`` singleton), with a
    listener of its own, as ``jupyter server`` has."""
    root.mkdir(parents=True, exist_ok=True)
    config = Config(
        {
            "Resolve": {"runtime_path": runtime_binary()},
            "IdentityProvider": {"token": "host-token"},
        }
    )
    app = ServerApp(
        jpserver_extensions={"jupyter_resolve": True, **QUIET_EXTENSIONS},
        config=config,
        ip="127.0.0.1",
        port=free_port(),
        port_retries=0,
        root_dir=str(root),
        open_browser=False,
        allow_root=True,
    )
    app.initialize(argv=[])
    return app


def extension(app: ServerApp) -> Any:
    return app.extension_manager.extension_apps["jupyter_resolve"].copy().pop()


def runtime_pid(app: ServerApp) -> int | None:
    pid: int | None = extension(app).gateway.supervisor.pid
    return pid


def runtime_children() -> list[int]:
    """agent-httpd processes this process started that still run."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmd = (entry / "cmdline").read_bytes().split(b"\0")[0]
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        state, ppid = fields[0], int(fields[1])
        if ppid == os.getpid() and b"agent-httpd" in cmd and state != "Z":
            found.append(int(entry.name))
    return found


async def kernel_connection(app: ServerApp) -> dict[str, str]:
    """JUPYTER_RESOLVE_* as a kernel this server starts sees them."""
    manager = app.kernel_manager
    kernel_id = await manager.start_kernel()
    try:
        pid = manager.get_kernel(kernel_id).provisioner.process.pid
        raw = Path(f"/proc/{pid}/environ").read_bytes()
        env = dict(item.split("=", 1) for item in raw.decode().split("\0") if "=" in item)
        return {name: env.get(name, "") for name in ENV_NAMES}
    finally:
        await manager.shutdown_kernel(kernel_id, now=True)


async def two(workdir: Path) -> dict[str, Any]:
    apps = [make_server(workdir / f"root{i}") for i in range(2)]
    report: dict[str, Any] = {"frozen": []}
    for app in apps:
        await app._post_start()  # what ServerApp.start() runs once its loop turns
        for _ in range(3):
            await asyncio.sleep(0)  # the freeze is called soon after the start hooks
        report["frozen"].append(gc.get_freeze_count())
    report["pids"] = [runtime_pid(app) for app in apps]
    report["tokens"] = [extension(app).kernel_token for app in apps]
    report["urls"] = [f"http://127.0.0.1:{app.port}/" for app in apps]
    report["kernels"] = [await kernel_connection(app) for app in apps]
    report["environ_while_serving"] = [n for n in ENV_NAMES if n in os.environ]
    for app in apps:
        await app._cleanup()  # what ServerApp.stop() runs
    report["left"] = runtime_children()
    report["environ_after"] = [n for n in ENV_NAMES if n in os.environ]
    return report


async def quick_stop(workdir: Path) -> dict[str, Any]:
    app = make_server(workdir / "root")
    supervisor = extension(app).gateway.supervisor
    start = asyncio.ensure_future(app._post_start())
    while supervisor.state != "starting":  # the spawn is under way
        await asyncio.sleep(0)
    await app._cleanup()
    await start
    return {"state": supervisor.state, "left": runtime_children()}


async def no_stop(workdir: Path) -> dict[str, Any]:
    app = make_server(workdir / "root")
    await app._post_start()
    return {"pid": runtime_pid(app)}


def main() -> None:
    mode, workdir = sys.argv[1], Path(sys.argv[2])
    run = {"two": two, "quick-stop": quick_stop, "no-stop": no_stop}[mode]
    report = asyncio.run(run(workdir))
    gc.collect()  # what a closed loop left to finalize speaks now, on stderr
    print(json.dumps(report))


if __name__ == "__main__":
    main()
