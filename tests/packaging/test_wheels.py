"""The release files as PyPI and a user's machine see them (issue 38): one `py3-none` wheel per
architecture with manylinux and musllinux tags, a static agent-httpd in each, the aarch64 one
running under qemu, and twine and auditwheel passing them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from tests.packaging.dists import ARCHES, DIST_TOOLS, HOST_ARCH, Dists, extract_runtime, wheel_tags

ELF_MACHINE = {"x86_64": "Advanced Micro Devices X86-64", "aarch64": "AArch64"}


@pytest.mark.parametrize("arch", ARCHES)
def test_a_wheel_per_architecture_for_every_python(dists: Dists, arch: str) -> None:
    wheel = dists.wheels[arch]
    assert wheel.name.endswith(f"-py3-none-manylinux_2_17_{arch}.musllinux_1_1_{arch}.whl")
    tags = [f"py3-none-manylinux_2_17_{arch}", f"py3-none-musllinux_1_1_{arch}"]
    assert wheel_tags(wheel) == tags
    with zipfile.ZipFile(wheel) as whl:
        names = whl.namelist()
        wheel_meta = next(n for n in names if n.endswith(".dist-info/WHEEL"))
        assert "Root-Is-Purelib: false" in whl.read(wheel_meta).decode()
        metadata = whl.read(wheel_meta.replace("WHEEL", "METADATA")).decode()
    assert "Requires-Python: >=3.10" in metadata
    assert not [n for n in names if n.endswith((".so", ".pyd"))], "no extension modules"
    assert any(n.endswith("labextensions/jupyter-resolve/package.json") for n in names)


@pytest.mark.parametrize("arch", ARCHES)
def test_the_shipped_runtime_is_static(dists: Dists, arch: str, tmp_path: Path) -> None:
    binary = extract_runtime(dists.wheels[arch], tmp_path)
    assert os.access(binary, os.X_OK)
    header = subprocess.run(["readelf", "-h", str(binary)], capture_output=True, text=True)
    assert ELF_MACHINE[arch] in header.stdout
    programs = subprocess.run(["readelf", "-lW", str(binary)], capture_output=True, text=True)
    assert "INTERP" not in programs.stdout  # no dynamic loader: starts whatever the libc
    dynamic = subprocess.run(["readelf", "-dW", str(binary)], capture_output=True, text=True)
    assert "NEEDED" not in dynamic.stdout


def _announces_a_port(argv: list[str]) -> None:
    """The binary starts, binds loopback and says so (then stops on SIGTERM)."""
    read_end, write_end = os.pipe()
    os.write(write_end, b"packaging-test-token\n")
    os.close(write_end)
    url = "http://127.0.0.1:9/x"
    proc = subprocess.Popen(
        [*argv, "--port", "0", "--inference-url", url, "--tools-url", url,
         "--token-fd", str(read_end)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, pass_fds=(read_end,),
    )  # fmt: skip
    os.close(read_end)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().decode()
        assert json.loads(line)["port"] > 0, line
    finally:
        proc.terminate()
        assert proc.wait(20) == 0


@pytest.mark.parametrize("arch", ARCHES)
def test_the_shipped_runtime_starts_here(dists: Dists, arch: str, tmp_path: Path) -> None:
    # the full unit and e2e tests of these binaries: make test-native, make test-arm64
    binary = extract_runtime(dists.wheels[arch], tmp_path)
    runner = [] if arch == HOST_ARCH else [f"qemu-{arch}"]
    if runner:
        assert shutil.which(runner[0]), f"{runner[0]} is missing: apt-get install qemu-user"
    _announces_a_port([*runner, str(binary)])


def _tool(name: str) -> str:
    tool = DIST_TOOLS / name
    if not tool.exists():
        pytest.skip(f"{tool} is missing: make setup installs it")
    return str(tool)


def test_twine_check_passes(dists: Dists) -> None:
    files = [str(dists.sdist), *(str(w) for w in dists.wheels.values())]
    check = subprocess.run(
        [_tool("twine"), "check", "--strict", *files], capture_output=True, text=True
    )
    assert check.returncode == 0, check.stdout + check.stderr
    assert check.stdout.count("PASSED") == len(files)


@pytest.mark.parametrize("arch", ARCHES)
def test_auditwheel_finds_no_library_to_need(dists: Dists, arch: str) -> None:
    show = subprocess.run(
        [_tool("auditwheel"), "show", str(dists.wheels[arch])], capture_output=True, text=True
    )
    assert show.returncode == 0, show.stdout + show.stderr
    # It checks the executable's symbols as it would an extension module's; a static binary
    # has no versioned symbol from a system library, so the oldest manylinux fits.
    text = " ".join(show.stdout.split())
    assert 'is consistent with the following platform tag: "manylinux_2_' in text
    assert "requires no external shared libraries" in text
