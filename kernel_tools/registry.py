"""The implementation registry (list 4 of DESIGN 3.4): every builtin that runs in the kernel.

Each entry takes the workspace, the validated arguments and the call's timeout (seconds, or
None). ``python`` is not here: the gateway runs its code directly as a kernel cell.
``web_fetch`` is a trusted tool implemented in the gateway.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from . import files, notebook, shell
from .paths import Workspace
from .result import Result

Tool = Callable[[Workspace, Mapping[str, Any], "float | None"], Result]

KERNEL_EXECUTED = frozenset({"python"})


def _shell(ws: Workspace, args: Mapping[str, Any], call_timeout: float | None) -> Result:
    return shell.shell(ws, args["command"], args.get("timeout"), call_timeout, shell.LIVE.get())


def _read_file(ws: Workspace, args: Mapping[str, Any], _: float | None) -> Result:
    return files.read_file(ws, args["path"], args.get("offset", 1), args.get("limit"))


def _write_file(ws: Workspace, args: Mapping[str, Any], _: float | None) -> Result:
    return files.write_file(ws, args["path"], args["content"])


def _edit_file(ws: Workspace, args: Mapping[str, Any], _: float | None) -> Result:
    return files.edit_file(ws, args["path"], args["old"], args["new"])


def _list_dir(ws: Workspace, args: Mapping[str, Any], _: float | None) -> Result:
    return files.list_dir(ws, args.get("path", ""))


def _search_files(ws: Workspace, args: Mapping[str, Any], _: float | None) -> Result:
    return files.search_files(
        ws, args["pattern"], args.get("path", ""), args.get("glob"), args.get("max_hits", 100)
    )


def _notebook_read(ws: Workspace, args: Mapping[str, Any], _: float | None) -> Result:
    return notebook.notebook_read(ws, args["path"])


REGISTRY: dict[str, Tool] = {
    "shell": _shell,
    "read_file": _read_file,
    "write_file": _write_file,
    "edit_file": _edit_file,
    "list_dir": _list_dir,
    "search_files": _search_files,
    "notebook_read": _notebook_read,
}


def implemented_names() -> frozenset[str]:
    """Every builtin the kernel implements: the registry plus those run as kernel cells."""
    return frozenset(REGISTRY) | KERNEL_EXECUTED
