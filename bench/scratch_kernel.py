"""``python -m bench.scratch_kernel [--calls N] [--sandbox bwrap|none] [--profile PATH]``: the
scratch-kernel part of the tool round trip alone, no server, no runtime.

A ``ScratchKernel`` as the gateway starts it (the bridge installed), then N ``python`` calls of
``1 + 1`` as ``kernel_tool`` makes them (after one warm-up call). Prints the median and 99th
percentile time per call and the caller's CPU time per call (the gateway's share: sending the
request, reading IOPub). ``--profile PATH`` runs the kernel's main thread under cProfile during
the calls and writes the profile to PATH (its top is printed): the kernel's side of
``--profile tool_roundtrip``, which profiles the gateway only. Not a metric of the table: a
diagnosis of ``tool_roundtrip_p50_ms``.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import shutil
import tempfile
import time
from pathlib import Path

from .core import percentile
from .profiling import top

START_PROFILE = (
    "import cProfile as _bench_cp\n_bench_profile = _bench_cp.Profile()\n_bench_profile.enable()"
)
STOP_PROFILE = "_bench_profile.disable()\n_bench_profile.dump_stats('kernel.prof')"


async def measure(calls: int, sandbox: str, profile: Path | None) -> str:
    from jupyter_resolve.scratch.kernels import ScratchKernel
    from jupyter_resolve.scratch.workspace import Workspace
    from jupyter_resolve.tools.kernel import run_python

    root = Path(tempfile.mkdtemp(prefix="resolve-bench-kernel-"))
    kernel = ScratchKernel(
        Workspace(root / ".resolve" / "sessions" / "bench"),
        root,
        logging.getLogger("bench"),
        sandbox=sandbox,
    )
    await kernel.start()
    try:
        await run_python(kernel, "1 + 1", 60)  # warm-up
        if profile is not None:
            await kernel.execute(START_PROFILE, 60, silent=True)
        samples: list[float] = []
        cpu = time.thread_time()
        for _ in range(calls):
            started = time.perf_counter()
            result = await run_python(kernel, "1 + 1", 60)
            samples.append((time.perf_counter() - started) * 1e3)
            if not result.ok or result.output != "2":
                raise RuntimeError(f"python call failed: {result.output}")
        cpu_ms = (time.thread_time() - cpu) / calls * 1e3
        lines = [
            f"{calls} python calls, sandbox {sandbox or 'none'}: "
            f"p50 {percentile(samples, 0.5):.2f} ms, p99 {percentile(samples, 0.99):.2f} ms, "
            f"caller CPU {cpu_ms:.2f} ms per call"
        ]
        if profile is not None:
            stopped = await kernel.execute(STOP_PROFILE, 60, silent=True)
            if stopped.error:
                raise RuntimeError(f"the kernel's profile was not written: {stopped.error}")
            shutil.copy(kernel.workspace.work / "kernel.prof", profile)
            lines += [f"== {profile} (the kernel's main thread)", top(profile)]
        return "\n".join(lines)
    finally:
        await kernel.shutdown()
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--sandbox", choices=("bwrap", "none"), default="none")
    parser.add_argument("--profile", type=Path, help="profile the kernel's main thread here")
    args = parser.parse_args()
    sandbox = "" if args.sandbox == "none" else args.sandbox
    print(asyncio.run(measure(args.calls, sandbox, args.profile)))


if __name__ == "__main__":
    main()
