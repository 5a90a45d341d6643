"""``python -m bench.profiled_server OUT.prof [jupyter server args]``: a ``jupyter server`` whose
main thread (the event loop, where the gateway runs) is profiled from SIGUSR2 (the bench sends it
once the server is ready, so start-up is left out) until it exits; the profile goes to OUT.prof.
With ``RESOLVE_BENCH_PROFILE_CLOCK=cpu`` (``--profile-clock cpu``) on the thread's CPU time.
"""

from __future__ import annotations

import cProfile
import os
import runpy
import signal
import sys
import time
from types import FrameType

CLOCK_ENV = "RESOLVE_BENCH_PROFILE_CLOCK"  # "cpu": the thread's CPU time, else wall time


def profiler_for_clock() -> cProfile.Profile:
    """A profiler on the clock ``--profile-clock`` chose: CPU time is what a busy shared
    machine does not inflate (a wall-time profile counts the waits for a core too)."""
    if os.environ.get(CLOCK_ENV) == "cpu":
        return cProfile.Profile(time.thread_time)
    return cProfile.Profile()


def main() -> None:
    out = sys.argv[1]
    sys.argv = ["jupyter-server", *sys.argv[2:]]
    profiler = profiler_for_clock()

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
