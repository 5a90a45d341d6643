"""Build hook: compile native/agent-httpd into the package, and ship the JupyterLab panel.

Runs for wheels and editable installs alike, so `pip install .` and `pip install -e .` both yield
a package whose `jupyter_resolve/bin/agent-httpd` exists. The panel itself is built before this
hook by hatch-jupyter-builder (pyproject.toml: `npm install` + `npm run build:prod`, needing
Node.js and npm and reaching only the npm registry) into `jupyter_resolve/labextension/`, unless
it is there already (an sdist carries it); a wheel carries it as
`share/jupyter/labextensions/<name>`.

agent-httpd is a program, not an extension module, so a wheel is `py3-none-<platform>`: one
wheel per platform for every Python. Two builds:

- release wheels (`make dist`, JUPYTER_RESOLVE_WHEEL_ARCH=x86_64 or aarch64): the static binary
  from `make -C native dist-<arch>`, which starts on any Linux of that architecture (glibc or
  musl), tagged `manylinux_2_17_<arch>.musllinux_1_1_<arch>`;
- any other build (`pip install` from the sdist or the tree): the C compiler found here builds
  for this machine, tagged with this machine's platform.

A release wheel also carries what its static binary links in: the notices of musl and GCC's
runtime as `jupyter_resolve/bin/agent-httpd.NOTICE` (native/scripts/toolchain.py writes them),
and, when JUPYTER_RESOLVE_SBOM_TOOLS names the venv with the CycloneDX tools (`make dist` sets
it), its CycloneDX SBOM in `.dist-info/sboms/` (PEP 770), written by scripts/sbom.py.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

ARCH_ENV = "JUPYTER_RESOLVE_WHEEL_ARCH"
SBOM_ENV = "JUPYTER_RESOLVE_SBOM_TOOLS"
RELEASE_ARCHES = ("x86_64", "aarch64")
COMPILERS = ("cc", "gcc", "clang")
NO_COMPILER = (
    "jupyter-resolve: building its agent runtime (agent-httpd, C) needs a C compiler and make; "
    "found {missing} on PATH. Install them (Debian/Ubuntu: apt-get install build-essential; "
    "Fedora/RHEL/Rocky: dnf install gcc make; Alpine: apk add build-base; macOS: "
    "xcode-select --install), or install a prebuilt wheel (Linux x86_64 and aarch64)."
)


def release_tag(arch: str) -> str:
    """The tag of a wheel carrying the static binary: installable on glibc 2.17+ and musl."""
    return f"py3-none-manylinux_2_17_{arch}.musllinux_1_1_{arch}"


def local_tag() -> str:
    """The tag of a wheel built for this machine only (linux_x86_64, macosx_14_0_arm64...)."""
    return "py3-none-" + sysconfig.get_platform().replace("-", "_").replace(".", "_")


def find_compiler() -> str:
    """$CC, else the first of cc, gcc, clang on PATH; a clear error when there is none."""
    wanted = os.environ.get("CC", "").split()
    candidates = wanted[:1] if wanted else list(COMPILERS)
    found = next((c for c in candidates if shutil.which(c)), None)
    missing = [c for c in candidates if not shutil.which(c)]
    if shutil.which("make") is None:
        missing.append("make")
    if found is None or "make" in missing:
        raise RuntimeError(NO_COMPILER.format(missing="no " + ", no ".join(missing)))
    return " ".join([found, *wanted[1:]]) if wanted else found


def build_runtime(root: Path, arch: str) -> Path:
    """Build agent-httpd: the static release binary for ``arch``, or (no arch) for here."""
    native = root / "native"
    if arch:
        subprocess.run(["make", "-C", str(native), f"dist-{arch}"], check=True)
        return native / "build" / "dist" / arch / "agent-httpd"
    subprocess.run(["make", "-C", str(native), f"CC={find_compiler()}"], check=True)
    return native / "build" / "agent-httpd"


def write_sbom(root: Path, arch: str, version: str, tools: Path) -> Path:
    """The release wheel's CycloneDX SBOM, by scripts/sbom.py in the CycloneDX tools' venv,
    reading this build's environment for the Python requirements."""
    out = root / "native" / "build" / "dist" / arch / "jupyter-resolve.cdx.json"
    argv = [str(tools / "bin" / "python"), str(root / "scripts" / "sbom.py"), "write"]
    argv += ["--arch", arch, "--version", version, "--python", sys.executable, "--out", str(out)]
    subprocess.run(argv, check=True)
    return out


def install_in_tree(binary: Path, target: Path) -> None:
    """The editable install's runtime, where the package looks for it."""
    target.parent.mkdir(exist_ok=True)
    # copy then rename: a running agent-httpd keeps its old inode ("text file busy")
    staged = target.with_name(target.name + ".new")
    shutil.copy2(binary, staged)
    staged.chmod(0o755)
    os.replace(staged, target)


class NativeBuildHook(BuildHookInterface):  # type: ignore[type-arg]
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel":
            return
        root = Path(self.root)
        arch = os.environ.get(ARCH_ENV, "")
        if arch and arch not in RELEASE_ARCHES:
            raise ValueError(f"{ARCH_ENV}={arch}: release wheels are built for {RELEASE_ARCHES}")
        binary = build_runtime(root, arch)
        if version == "editable":
            install_in_tree(binary, root / "jupyter_resolve" / "bin" / "agent-httpd")
        else:
            # straight from the build: an aarch64 wheel leaves this tree's runtime as it is
            build_data["force_include"][str(binary)] = "jupyter_resolve/bin/agent-httpd"
            if arch:  # what the static link put in it, beside it
                notice = binary.parent / "NOTICE"
                build_data["force_include"][str(notice)] = "jupyter_resolve/bin/agent-httpd.NOTICE"
        built = root / "jupyter_resolve" / "labextension"
        name = json.loads((built / "package.json").read_text())["name"]
        if version != "editable":
            # editable installs link the labextension from `make setup` instead (which also
            # copies install.json there): `jupyter labextension list` reads its installer from it
            shutil.copy2(root / "install.json", built / "install.json")
            build_data["shared_data"][str(built)] = f"share/jupyter/labextensions/{name}"
        build_data["pure_python"] = False
        build_data["tag"] = release_tag(arch) if arch else local_tag()
        tools = os.environ.get(SBOM_ENV)
        if arch and tools and version != "editable":
            sbom = write_sbom(root, arch, self.metadata.version, Path(tools))
            build_data["sbom_files"].append(str(sbom))
