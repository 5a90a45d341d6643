"""Build hook: compile native/agent-httpd into the package, and ship the JupyterLab panel.

Runs for wheels and editable installs alike, so `pip install .` and `pip install -e .` both yield
a package whose `jupyter_resolve/bin/agent-httpd` exists. The panel itself is built before this
hook by hatch-jupyter-builder (pyproject.toml: `npm install` + `npm run build:prod`, needing
Node.js and npm and reaching only the npm registry) into `jupyter_resolve/labextension/`; a
wheel carries it as `share/jupyter/labextensions/<name>`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


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
        built = root / "jupyter_resolve" / "labextension"
        name = json.loads((built / "package.json").read_text())["name"]
        if version != "editable":
            # editable installs link the labextension from `make setup` instead (which also
            # copies install.json there): `jupyter labextension list` reads its installer from it
            shutil.copy2(root / "install.json", built / "install.json")
            build_data["shared_data"][str(built)] = f"share/jupyter/labextensions/{name}"
        build_data["pure_python"] = False
        build_data["infer_tag"] = True
