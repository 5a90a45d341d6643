"""Build hook: compile native/agent-httpd and build the JupyterLab panel, inside the package.

Runs for wheels and editable installs alike, so `pip install .` and `pip install -e .` both yield
a package whose `jupyter_resolve/bin/agent-httpd` exists and whose prebuilt labextension is in
`jupyter_resolve/labextension/` (shipped as `share/jupyter/labextensions/<name>`). The panel is
rebuilt only when its output is missing or older than its sources; that build needs Node.js and
npm and reaches only the npm registry (`npm ci` from the committed lockfile).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

LABEXT_SOURCES = ("src", "style", "package.json", "package-lock.json", "tsconfig.json")


def newest_mtime(root: Path, names: tuple[str, ...]) -> float:
    """The newest modification time of the files under ``root/name`` for each name."""
    newest = 0.0
    for name in names:
        path = root / name
        files = path.rglob("*") if path.is_dir() else [path]
        for file in files:
            if file.is_file():
                newest = max(newest, file.stat().st_mtime)
    return newest


def labextension_stale(root: Path) -> bool:
    """True when the built panel is missing or older than its sources."""
    built = root / "jupyter_resolve" / "labextension" / "package.json"
    source = root / "labextension"
    if not built.exists():
        return True
    if not source.exists():
        return False  # an sdist or wheel without sources: ship what is there
    return newest_mtime(source, LABEXT_SOURCES) > built.stat().st_mtime


def build_labextension(root: Path) -> None:
    """``npm ci`` (when node_modules is missing or older than the lockfile), then the build."""
    source = root / "labextension"
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError(
            "building the JupyterLab panel needs Node.js (>=20.19) and npm on PATH; "
            "install them, or build from a wheel that ships the panel prebuilt"
        )
    marker = source / "node_modules" / ".package-lock.json"
    lock = source / "package-lock.json"
    if not marker.exists() or marker.stat().st_mtime < lock.stat().st_mtime:
        subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=source, check=True
        )
    subprocess.run([npm, "run", "--silent", "build:prod"], cwd=source, check=True)


class NativeBuildHook(BuildHookInterface):  # type: ignore[type-arg]
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel":
            return
        root = Path(self.root)
        subprocess.run(["make", "-C", str(root / "native")], check=True)
        target = root / "jupyter_resolve" / "bin" / "agent-httpd"
        target.parent.mkdir(exist_ok=True)
        # copy then rename: a running agent-httpd keeps its old inode ("text file busy")
        staged = target.with_name(target.name + ".new")
        shutil.copy2(root / "native" / "build" / "agent-httpd", staged)
        staged.chmod(0o755)
        os.replace(staged, target)
        if labextension_stale(root):
            build_labextension(root)
        built = root / "jupyter_resolve" / "labextension"
        name = json.loads((built / "package.json").read_text())["name"]
        if version != "editable":
            # editable installs link the labextension from `make setup` instead
            build_data["shared_data"][str(built)] = f"share/jupyter/labextensions/{name}"
        build_data["pure_python"] = False
        build_data["infer_tag"] = True
