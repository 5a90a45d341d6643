"""The project's sdist and release wheels, built as `make dist` builds them, and fresh venvs to
install them into (no network: a venv borrows the dev venv's packages for the dependencies)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ARCHES = ("x86_64", "aarch64")
HOST_ARCH = os.uname().machine
DIST_TOOLS = REPO / ".venv" / "dist-tools" / "bin"
# The CycloneDX tools (`make setup`): with them, each release wheel carries its SBOM
SBOM_TOOLS = REPO / ".venv" / "dist-tools"
SBOM_STAMP = SBOM_TOOLS / ".sbom-stamp"
# What a source build runs besides Python: make and the C toolchain. No node, no npm.
BUILD_TOOLS = ("make", "sh", "mkdir", "uname", "as", "ld")
COMPILERS = ("cc", "gcc")


@dataclass(frozen=True)
class Dists:
    folder: Path
    sdist: Path
    wheels: dict[str, Path]  # by architecture


def build_dists(folder: Path) -> Dists:
    """The sdist, then one release wheel per architecture, with the dev venv's hatchling (and
    its SBOM, where the CycloneDX tools are), as `make dist` builds them."""
    hatchling = [sys.executable, "-m", "hatchling", "build", "-d", str(folder)]
    subprocess.run([*hatchling, "-t", "sdist"], cwd=REPO, check=True, capture_output=True)
    for arch in ARCHES:
        env = {**os.environ, "JUPYTER_RESOLVE_WHEEL_ARCH": arch}
        if SBOM_STAMP.exists():
            env["JUPYTER_RESOLVE_SBOM_TOOLS"] = str(SBOM_TOOLS)
        subprocess.run([*hatchling, "-t", "wheel"], cwd=REPO, env=env, check=True)
    wheels = {arch: next(folder.glob(f"*_{arch}.whl")) for arch in ARCHES}
    return Dists(folder, next(folder.glob("*.tar.gz")), wheels)


def wheel_tags(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as whl:
        meta = next(n for n in whl.namelist() if n.endswith(".dist-info/WHEEL"))
        lines = whl.read(meta).decode().splitlines()
    return [line.split(": ", 1)[1] for line in lines if line.startswith("Tag: ")]


def wheel_text(wheel: Path, suffix: str) -> str:
    """The text of the one file of ``wheel`` whose name ends with ``suffix``."""
    with zipfile.ZipFile(wheel) as whl:
        names = [n for n in whl.namelist() if n.endswith(suffix)]
        assert len(names) == 1, (suffix, names)
        return whl.read(names[0]).decode()


def extract_runtime(wheel: Path, into: Path) -> Path:
    """The agent-httpd a wheel ships, with the mode it has in the wheel."""
    with zipfile.ZipFile(wheel) as whl:
        info = whl.getinfo("jupyter_resolve/bin/agent-httpd")
        path = Path(whl.extract(info, into))
    path.chmod((info.external_attr >> 16) & 0o777)
    return path


# `make setup` makes these where the machine has the Python: the package's dependencies only
DEPS_VENVS = {version: REPO / ".venv" / f"deps-py{version}" for version in ("3.10", "3.13")}


def purelib(python: Path) -> str:
    return subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


def fresh_venv(path: Path, deps: Path | None = None) -> Path:
    """A venv without our package, made by the Python of the venv ``deps`` (default: the dev
    venv), whose site-packages come after its own (a .pth)."""
    base = deps / "bin" / "python" if deps else Path(sys.executable)
    subprocess.run([str(base), "-m", "venv", "--without-pip", str(path)], check=True)
    python = path / "bin" / "python"
    borrowed = purelib(base) if deps else sysconfig.get_paths()["purelib"]
    (Path(purelib(python)) / "zz_dev_venv.pth").write_text(borrowed + "\n")
    return python


def pip_install(python: Path, target: Path, env: dict[str, str] | None = None) -> str:
    """`pip install` ``target`` into the venv of ``python``, offline; its output (raises
    CalledProcessError with it on failure)."""
    argv = [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps"]
    argv += ["--no-index", "--no-build-isolation", "--no-cache-dir", str(target)]
    done = subprocess.run(
        argv, env=env, capture_output=True, text=True, cwd=target.parent, check=False
    )
    if done.returncode != 0:
        raise subprocess.CalledProcessError(done.returncode, argv, done.stdout, done.stderr)
    return done.stdout + done.stderr


def tool_dir(folder: Path, *, compiler: bool) -> Path:
    """A folder of links to the build's tools (the C compiler only when ``compiler``): a PATH
    without node or npm, whatever else this machine has."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in BUILD_TOOLS + (COMPILERS if compiler else ()):
        found = shutil.which(name)
        assert found, f"{name} is not installed"
        (folder / name).symlink_to(found)
    return folder
