"""Builtins that run in the session's scratch kernel: ``python`` as a cell, the others through
the kernel_tools bridge."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..contracts.bodies import ToolResult
from ..scratch.kernels import Execution, OnOutput, Preload, ScratchKernel


@dataclass
class PythonBinding:
    """What one ``python`` call runs with: the folder it reads (a notebook chat's; None:
    ``work/``), the snapshots it loads first, notes for the model (notebook/binding.py)."""

    folder: str | None = None
    preload: Preload = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def notebook_folder_of(root: Path, notebook: str) -> str | None:
    """The real path of ``notebook``'s folder under the server root ``root`` (None: outside
    it, or not there): where a notebook chat's python reads. The caller checks that the run's
    person may read contents (DESIGN 10.1)."""
    real_root = root.resolve()
    folder = (real_root / notebook).resolve().parent
    if not folder.is_relative_to(real_root) or not folder.is_dir():
        return None
    return str(folder)


PythonBinder = Callable[[Any, str], Awaitable[PythonBinding]]
"""Takes a run and the call's id: the binding of that run's python call."""

RICH_TYPES = (
    "text/markdown",
    "text/html",
    "image/png",
    "image/svg+xml",
    "image/jpeg",
    "application/json",
    "text/plain",
)


def python_result(execution: Execution, timeout: float) -> ToolResult:
    """The model's text and the client's MIME bundle for one ``python`` execution."""
    parts: list[str] = []
    if execution.stdout:
        parts.append(execution.stdout.rstrip("\n"))
    if execution.stderr:
        parts.append(f"[stderr]\n{execution.stderr.rstrip()}")
    bundle: dict[str, Any] = {}
    shown: list[str] = []
    for data in execution.outputs:
        for mime in RICH_TYPES:
            if mime in data:
                bundle[mime] = data[mime]
        images = [m for m in data if m.startswith("image/")]
        shown.extend(images)
        if "text/plain" in data and not images:
            parts.append(str(data["text/plain"]))
    if shown:
        parts.append(f"[shown to the person: {', '.join(shown)}]")
    if execution.died:
        return ToolResult(
            ok=False,
            output="the scratch kernel died during this call (out of memory, or os._exit?); it "
            "has been restarted with an empty namespace — re-run what you need",
        )
    if execution.timed_out:
        parts.append(f"[timed out after {timeout:g} s: the kernel was interrupted]")
        return ToolResult(ok=False, output="\n".join(parts), mime=bundle or None)
    if execution.error:
        parts.append(execution.error)
    return ToolResult(ok=execution.error is None, output="\n".join(parts), mime=bundle or None)


async def run_python(
    kernel: ScratchKernel,
    code: str,
    timeout: float,
    on_output: OnOutput | None = None,
    reads_from: str | None = None,
    preload: Preload | None = None,
) -> ToolResult:
    """One ``python`` call; ``reads_from`` and ``preload`` as for :meth:`ScratchKernel.execute`."""
    execution = await kernel.execute(
        code, timeout, on_output=on_output, reads_from=reads_from, preload=preload
    )
    return python_result(execution, timeout)


async def run_bridged(
    kernel: ScratchKernel,
    name: str,
    arguments: dict[str, Any],
    timeout: float,
    on_output: OnOutput | None = None,
) -> ToolResult:
    answer = await kernel.bridge_call(name, arguments, timeout, on_output)
    if isinstance(answer, dict):
        return ToolResult(
            ok=bool(answer.get("ok")), output=str(answer.get("output", "")), mime=answer.get("mime")
        )
    if isinstance(answer, Execution) and answer.died:
        return python_result(answer, timeout)
    if isinstance(answer, Execution) and answer.timed_out:
        return ToolResult(ok=False, output=f"{name}: timed out after {timeout:g} s")
    detail = answer.error if isinstance(answer, Execution) and answer.error else "no result"
    return ToolResult(ok=False, output=f"{name}: the scratch kernel gave no result ({detail})")
