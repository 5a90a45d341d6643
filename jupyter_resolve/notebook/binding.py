"""A notebook chat's ``python`` (DESIGN 5, 9.2): the code runs in the notebook's folder and reads
the person's files by the paths their notebook uses, read-only (writes go to the session's
``work/``: kernel_tools/notebook_folder.py and the sandbox), with the variables the person
mentioned already in its namespace.

The folder is bound only for a run whose caller may read the server root's files
(``run.started.permissions``, DESIGN 10.1); any other stays in ``work/``. Mentioned variables are
copied once per run by ``snapshot_variable`` (its size limit applies), and only for a run that
was offered that tool, which reaches the person's kernel.
"""

from __future__ import annotations

import weakref
from pathlib import Path
from typing import Any

from ..contracts.bodies import ToolCallRequest
from ..runs.run import Run
from ..runs.start import run_permissions
from ..scratch.kernels import Preload
from ..tools.kernel import PythonBinder, PythonBinding, notebook_folder_of
from .tools import NotebookHost, snapshot_variable

# A run's mentioned variables, copied at its first python call (kept as long as the run is).
_taken: weakref.WeakKeyDictionary[Run, tuple[Preload, list[str]]] = weakref.WeakKeyDictionary()


def _started(run: Run) -> dict[str, Any]:
    first = run.events[0] if run.events else None
    return first.data if first is not None and first.type == "run.started" else {}


def may_read_contents(run: Run) -> bool:
    """The run's caller may read the server's files, as ``run.started`` recorded it."""
    return run_permissions(run).contents_read


def notebook_folder(root: Path, run: Run) -> str | None:
    """The real path of the run's notebook's folder, when python may read there."""
    if run.notebook is None or not may_read_contents(run):
        return None
    return notebook_folder_of(root, run.notebook)


def mentioned(run: Run) -> list[str]:
    """The names of the variables the run's chat mentioned (as ``run.started`` lists them)."""
    mentions = _started(run).get("mentions") or []
    return [str(m["name"]) for m in mentions if isinstance(m, dict) and m.get("name")]


def python_binder(host: NotebookHost, root: Path) -> PythonBinder:
    """The builtin ``python``'s binding (runs/builtin_tools.py) under the server root ``root``,
    with ``host``'s services."""

    async def binder(run: Run, call_id: str) -> PythonBinding:
        return await python_binding(host, root, run, call_id)

    return binder


async def python_binding(host: NotebookHost, root: Path, run: Run, call_id: str) -> PythonBinding:
    """What a python call of ``run`` runs with."""
    folder = notebook_folder(root, run)
    if folder is None or "snapshot_variable" not in run.tool_names:
        return PythonBinding(folder)
    taken = _taken.get(run)
    if taken is None:
        taken = _taken[run] = await _snapshots(host, run, call_id)
        return PythonBinding(folder, *taken)
    return PythonBinding(folder, taken[0])  # the notes were told at the first call


async def _snapshots(host: NotebookHost, run: Run, call_id: str) -> tuple[Preload, list[str]]:
    preload: Preload = {}
    notes: list[str] = []
    workspace = host.kernels.workspace(run.session_id)
    for name in mentioned(run):
        request = ToolCallRequest(
            run_id=run.run_id,
            call_id=f"{call_id}.mention",
            name="snapshot_variable",
            arguments={"notebook": run.notebook, "name": name},
        )
        result = await snapshot_variable(host, request)
        found = [
            (target, digest)
            for target, digest in workspace.record().items()
            if target.startswith(f"snapshots/{name}.")
        ]
        if result.ok and found:
            target, digest = found[0]
            preload[name] = (target.split("/", 1)[1], digest)
        else:
            notes.append(f"[@{name} is not in your namespace: {result.output}]")
    return preload, notes
