"""Build hook: compile native/agent-httpd and place it inside the package.

Runs for wheels and editable installs alike, so `pip install .` and `pip install -e .` both yield
a package whose `jupyter_resolve/bin/agent-httpd` exists.
"""

from __future__ import annotations

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
        shutil.copy2(root / "native" / "build" / "agent-httpd", target)
        target.chmod(0o755)
        build_data["pure_python"] = False
        build_data["infer_tag"] = True
