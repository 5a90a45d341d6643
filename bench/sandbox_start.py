"""Scratch kernel start-up with and without the bubblewrap sandbox (figures, not a test).

    .venv/bin/python -m bench.sandbox_start [--repeat N]

Times, per mode, a scratch kernel's start (launch, kernel_info, the bridge bootstrap) and its
first ``python`` call, the median of N starts one after the other.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import tempfile
import time
from pathlib import Path

from jupyter_resolve.scratch.kernels import ScratchKernel
from jupyter_resolve.scratch.sandbox import bwrap_available
from jupyter_resolve.scratch.workspace import Workspace


async def one(root: Path, sandbox: str, index: int) -> tuple[float, float]:
    workspace = Workspace(root / ".resolve" / "sessions" / f"b-{sandbox or 'none'}-{index}")
    kernel = ScratchKernel(
        workspace.create(),
        root,
        logging.getLogger("bench"),
        sandbox=sandbox,
        state_dir=root / ".resolve",
    )
    started = time.perf_counter()
    await kernel.start()
    ready = time.perf_counter()
    await kernel.execute("1 + 1", timeout=30)
    done = time.perf_counter()
    await kernel.shutdown()
    return (ready - started) * 1000, (done - ready) * 1000


async def main(repeat: int) -> None:
    modes = ["", "bwrap"] if bwrap_available() else [""]
    with tempfile.TemporaryDirectory() as tmp:
        for sandbox in modes:
            starts, firsts = [], []
            await one(Path(tmp), sandbox, -1)  # warm the file cache
            for index in range(repeat):
                start, first = await one(Path(tmp), sandbox, index)
                starts.append(start)
                firsts.append(first)
            print(
                f"{sandbox or 'none':6} start {statistics.median(starts):7.0f} ms "
                f"(min {min(starts):.0f}, max {max(starts):.0f})  "
                f"first call {statistics.median(firsts):5.1f} ms   n={repeat}"
            )
    if "bwrap" not in modes:
        print("bwrap: not available on this machine")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    asyncio.run(main(parser.parse_args().repeat))
