"""Where `make setup` put the client venvs, and running a client script with one of them."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
REPO = Path(__file__).parents[3]


def venv_python(name: str) -> Path:
    """``.venv/<name>/bin/python`` (a worktree shares the main checkout's venv)."""
    python = Path(os.environ.get("VENV", REPO / ".venv")) / name / "bin" / "python"
    if not python.exists():
        python = Path(sys.prefix) / name / "bin" / "python"
    assert python.exists(), f"no client venv at {python}: run `make setup`"
    return python


async def run_client(venv: str, script: str, *args: str) -> dict[str, Any]:
    """Run ``script`` with the venv's interpreter; its last stdout line is its JSON report."""
    process = await asyncio.create_subprocess_exec(
        str(venv_python(venv)),
        str(HERE / script),
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        # loopback only: litellm would fetch its model price list at import without the flag
        env={
            **os.environ,
            "PYTHONPATH": str(HERE),
            "NO_PROXY": "*",
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        },
    )
    # a guard against a hang, not a timed assertion
    out, err = await asyncio.wait_for(process.communicate(), 300)
    assert process.returncode == 0, f"{script} failed:\n{err.decode()[-4000:]}"
    report: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
    return report
