"""``python -m bench.profiled_server OUT.prof [jupyter server args]``: a ``jupyter server`` whose
main thread (the event loop, where the gateway runs) is profiled from SIGUSR2 (the bench sends it
once the server is ready, so start-up is left out) until it exits; the profile goes to OUT.prof.
"""

from __future__ import annotations

import cProfile
import runpy
import signal
import sys
from types import FrameType


def main() -> None:
    out = sys.argv[1]
    sys.argv = ["jupyter-server", *sys.argv[2:]]
    profiler = cProfile.Profile()

    def start(signum: int, frame: FrameType | None) -> None:
        profiler.enable()

    signal.signal(signal.SIGUSR2, start)
    try:
        runpy.run_module("jupyter_server", run_name="__main__", alter_sys=True)
    except SystemExit:
        pass
    finally:
        profiler.disable()
        profiler.dump_stats(out)


if __name__ == "__main__":
    main()
