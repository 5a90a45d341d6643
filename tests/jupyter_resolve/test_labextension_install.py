"""A development install (`make setup`: the panel built in the tree and linked into the venv)
lists the panel like a wheel install does, with its installer: ``(python, jupyter_resolve)``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).parents[2]
BUILT = REPO / "jupyter_resolve" / "labextension"
LIST = (
    "from jupyterlab.labextensions import LabExtensionApp; "
    "LabExtensionApp.launch_instance(['list'])"
)


def test_install_json_names_the_python_package() -> None:
    install = json.loads((REPO / "install.json").read_text())
    assert install["packageManager"] == "python"
    assert install["packageName"] == "jupyter_resolve"


def test_dev_install_lists_the_panel_with_its_installer(tmp_path: Path) -> None:
    # the Makefile's rule puts install.json beside the build `make setup` made
    subprocess.run(
        ["make", "-s", "-C", str(REPO), "jupyter_resolve/labextension/install.json"], check=True
    )
    assert (BUILT / "install.json").is_file()
    env = dict(os.environ)
    link = Path(sys.prefix) / "share" / "jupyter" / "labextensions" / "jupyter-resolve"
    if link.resolve() != BUILT.resolve():
        # a worktree sharing another checkout's venv: link this tree's build the same way
        data = tmp_path / "share" / "jupyter"
        (data / "labextensions").mkdir(parents=True)
        (data / "labextensions" / "jupyter-resolve").symlink_to(BUILT)
        env["JUPYTER_PATH"] = str(data)
    listing = subprocess.run(
        [sys.executable, "-c", LIST], env=env, capture_output=True, text=True, cwd=tmp_path
    )
    output = listing.stdout + listing.stderr
    line = re.search(r"jupyter-resolve v[0-9.]+ .*", output)
    assert line is not None, output
    assert "enabled" in line.group(0) and "OK" in line.group(0), line.group(0)
    assert line.group(0).endswith("(python, jupyter_resolve)"), line.group(0)
