"""The silent cells that install the kernel_tools bridge in a scratch kernel (DESIGN 3.3).

First the import: a local kernel finds kernel_tools on the PYTHONPATH the gateway gives it, and
an image may have the package installed. A kernel that cannot import it (another machine, an
image without our package) prints ``MISSING`` instead, and the gateway sends a second cell with
the package's files, loaded from memory by ``shipped_package.py``. Either way the paths go in
as Python string literals (``repr``), never as code, and ``install`` checks the session folder
exists in the kernel: a kernel elsewhere needs it mounted at the same path.
"""

from __future__ import annotations

import functools
from importlib import resources
from pathlib import Path

PACKAGE = "kernel_tools"
MISSING = "resolve-bridge: kernel_tools is not importable in this kernel"


def _install(session_dir: Path, server_root: Path) -> str:
    return (
        f"__resolve_bridge.install(session_dir={str(session_dir)!r}, "
        f"server_root={str(server_root)!r})\n"
    )


def import_cell(session_dir: Path, server_root: Path) -> str:
    """Import and install the bridge, or print ``MISSING`` when the package is not there (a
    broken copy, one that lacks one of its own modules, still fails loudly)."""
    return (
        "try:\n"
        f"    import {PACKAGE}.bridge as __resolve_bridge\n"
        "except ModuleNotFoundError as __resolve_missing:\n"
        f"    if __resolve_missing.name not in ({PACKAGE!r}, '{PACKAGE}.bridge'):\n"
        "        raise\n"
        f"    print({MISSING!r})\n"
        "else:\n    " + _install(session_dir, server_root)
    )


@functools.cache
def package_files() -> dict[str, str]:
    """The package's modules and schema file, as the gateway has them (about 45 KB)."""
    folder = resources.files(PACKAGE)
    return {
        entry.name: entry.read_text("utf-8")
        for entry in folder.iterdir()
        if entry.name.endswith((".py", ".json"))
    }


@functools.cache
def _loader_source() -> str:
    return (Path(__file__).parent / "shipped_package.py").read_text("utf-8")


def shipping_cell(session_dir: Path, server_root: Path) -> str:
    """Ship the package into the kernel, then import and install the bridge. The loader runs
    in a namespace of its own, so the agent's namespace gains only ``__resolve_bridge``."""
    return (
        "__resolve_ship = {'__name__': '__resolve_ship__'}\n"
        f"exec(compile({_loader_source()!r}, '<resolve shipped_package>', 'exec'), "
        "__resolve_ship)\n"
        f"__resolve_ship['ship']({PACKAGE!r}, {package_files()!r})\n"
        "del __resolve_ship\n"
        f"import {PACKAGE}.bridge as __resolve_bridge\n" + _install(session_dir, server_root)
    )


def prepare_cell(folder: str | None, snapshots: dict[str, str]) -> str:
    """Bind the bridge to a notebook's folder (None: back to ``work/``), then load snapshots
    ``{variable name: file in context/snapshots/}`` into the namespace; literals only."""
    cell = f"__resolve_bridge.bind({folder!r})\n"
    if snapshots:
        cell += f"__resolve_bridge.load_snapshots({snapshots!r})\n"
    return cell
