"""``python -m bench.import_probe ROOT``, run by ``bench.footprint`` in fresh interpreters.

Times, in one interpreter: importing jupyter_server's part of the extension, then
``jupyter_resolve.extension`` (what the import adds), then loading the extension into a
``ServerApp`` that has only it (``JUPYTER_NO_CONFIG``, set by the caller): the gateway and the
handlers it imports then, the gateway built, the routes added; the runtime starts later, with
the server. Prints {"server_ms", "own_ms", "load_ms"} as JSON.
"""

from __future__ import annotations

import importlib
import json
import sys
import time
from typing import Any


def main(root: str) -> None:
    t0 = time.perf_counter()
    importlib.import_module("jupyter_server.extension.application")
    t1 = time.perf_counter()
    extension = importlib.import_module("jupyter_resolve.extension")
    t2 = time.perf_counter()

    serverapp = importlib.import_module("jupyter_server.serverapp")
    app_class: Any = extension.ResolveExtension
    load = app_class._load_jupyter_server_extension.__func__
    loads: list[float] = []

    def timed(cls: Any, server: Any) -> Any:
        start = time.perf_counter()
        try:
            return load(cls, server)
        finally:
            loads.append(time.perf_counter() - start)

    app_class._load_jupyter_server_extension = classmethod(timed)
    app = serverapp.ServerApp()
    app.initialize(
        argv=[
            "--ServerApp.jpserver_extensions={'jupyter_resolve': True}",
            f"--ServerApp.root_dir={root}",
            "--ServerApp.ip=127.0.0.1",
            "--ServerApp.port=0",
            "--Resolve.provider=openai",
            "--Resolve.base_url=http://127.0.0.1:9/v1",
        ]
    )
    if len(loads) != 1:
        raise SystemExit(f"the extension was loaded {len(loads)} times, not once")
    times = {"server_ms": t1 - t0, "own_ms": t2 - t1, "load_ms": loads[0]}
    print(json.dumps({name: value * 1e3 for name, value in times.items()}))


if __name__ == "__main__":
    main(sys.argv[1])
