"""Each release wheel's CycloneDX SBOM (issue 50.5), in its ``.dist-info/sboms/`` (PEP 770):
accepted by cyclonedx-python-lib's strict validator (which refuses a broken one), naming with
versions and licenses the Python requirements as resolved, the npm packages bundled into the
panel, and what agent-httpd links and was built with."""

from __future__ import annotations

import copy
import hashlib
import json
import re
import subprocess
from collections.abc import Iterator
from importlib.metadata import version as installed_version
from pathlib import Path
from typing import Any

import pytest

from tests.packaging.dists import (
    ARCHES,
    REPO,
    SBOM_STAMP,
    SBOM_TOOLS,
    Dists,
    extract_runtime,
    wheel_text,
)

Json = dict[str, Any]
DEB_ARCH = {"x86_64": "amd64", "aarch64": "arm64"}
BUNDLED = "share/jupyter/labextensions/jupyter-resolve/static/third-party-licenses.json"


@pytest.fixture(autouse=True)
def _sbom_tools() -> None:
    if not SBOM_STAMP.exists():
        pytest.skip(f"{SBOM_STAMP} is missing: make setup installs the CycloneDX tools")


def validate(path: Path) -> subprocess.CompletedProcess[str]:
    """scripts/sbom.py validate: cyclonedx-python-lib's JSON validator, in the tools' venv."""
    argv = [str(SBOM_TOOLS / "bin" / "python"), str(REPO / "scripts" / "sbom.py"), "validate"]
    return subprocess.run([*argv, str(path)], capture_output=True, text=True, check=False)


def sbom_of(wheel: Path) -> Json:
    sbom: Json = json.loads(wheel_text(wheel, ".dist-info/sboms/jupyter-resolve.cdx.json"))
    return sbom


def every(components: list[Json]) -> Iterator[Json]:
    for component in components:
        yield component
        yield from every(component.get("components", []))


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@pytest.mark.parametrize("arch", ARCHES)
def test_a_validator_accepts_each_wheels_sbom_and_refuses_a_broken_one(
    dists: Dists, arch: str, tmp_path: Path
) -> None:
    wheel = dists.wheels[arch]
    accepted = validate(wheel)
    assert accepted.returncode == 0, accepted.stderr
    broken = copy.deepcopy(sbom_of(wheel))
    broken["components"][0]["licenses"] = [{"license": {}}]  # neither id nor name
    (tmp_path / "broken.cdx.json").write_text(json.dumps(broken))
    refused = validate(tmp_path / "broken.cdx.json")
    assert refused.returncode == 1 and "not a valid CycloneDX 1.6 SBOM" in refused.stderr


@pytest.mark.parametrize("arch", ARCHES)
def test_the_sbom_names_everything_with_versions_and_licenses(dists: Dists, arch: str) -> None:
    sbom = sbom_of(dists.wheels[arch])
    assert sbom["bomFormat"] == "CycloneDX" and sbom["specVersion"] == "1.6"
    root = sbom["metadata"]["component"]
    version = dists.wheels[arch].name.split("-")[1]
    assert (root["name"], root["version"]) == ("jupyter-resolve", version)
    components = list(every(sbom["components"]))
    refs = [c["bom-ref"] for c in [root, *components]]
    assert len(refs) == len(set(refs))
    for component in components:
        assert component.get("version") and component.get("licenses"), component["name"]
    for dependency in sbom["dependencies"]:
        assert dependency["ref"] in refs and set(dependency["dependsOn"]) <= set(refs)
    tools = {t["name"] for t in sbom["metadata"]["tools"]["components"]}
    assert {"cyclonedx-py", "cyclonedx-npm"} <= tools


@pytest.mark.parametrize("arch", ARCHES)
def test_the_python_requirements_as_resolved(dists: Dists, arch: str) -> None:
    wheel = dists.wheels[arch]
    requires = [
        line.split(": ", 1)[1]
        for line in wheel_text(wheel, ".dist-info/METADATA").splitlines()
        if line.startswith("Requires-Dist: ") and "extra ==" not in line
    ]
    sbom = sbom_of(wheel)
    pypi = [c for c in sbom["components"] if c.get("purl", "").startswith("pkg:pypi/")]
    python = {normalize(c["name"]): c for c in pypi}
    root_deps = next(d for d in sbom["dependencies"] if d["ref"] == "jupyter-resolve")
    for requirement in requires:
        name = normalize(re.split(r"[<>=!~ ;\[]", requirement, maxsplit=1)[0])
        assert name in python, f"{name} is missing"
        # as resolved: the version installed where the wheel was built (this venv)
        assert python[name]["version"] == installed_version(name)
        assert python[name]["bom-ref"] in root_deps["dependsOn"]
    assert "anyio" in python  # reached through jupyter_server and httpx
    # what only the dev extras bring is not a requirement of the wheel
    assert not {"pytest", "mypy", "sphinx", "jupyterlab"} & python.keys()


@pytest.mark.parametrize("arch", ARCHES)
def test_the_panels_bundled_npm_packages(dists: Dists, arch: str) -> None:
    wheel = dists.wheels[arch]
    bundled = json.loads(wheel_text(wheel, BUNDLED))["packages"]
    panel = next(c for c in sbom_of(wheel)["components"] if c["bom-ref"] == "panel")
    assert panel["name"] == "jupyter-resolve" and panel["purl"].startswith("pkg:npm/")
    nested = {(c["name"], c["version"]): c for c in panel["components"]}
    assert nested.keys() == {(p["name"], p["versionInfo"]) for p in bundled}
    for package in bundled:
        component = nested[(package["name"], package["versionInfo"])]
        assert component["purl"] == f"pkg:npm/{package['name']}@{package['versionInfo']}"
        assert component["licenses"][0]["license"]["id"] == package["licenseId"]


@pytest.mark.parametrize("arch", ARCHES)
def test_the_runtime_its_libc_and_its_toolchain(dists: Dists, arch: str, tmp_path: Path) -> None:
    wheel = dists.wheels[arch]
    components = {c["bom-ref"]: c for c in sbom_of(wheel)["components"]}
    runtime = components["agent-httpd"]
    binary = extract_runtime(wheel, tmp_path).read_bytes()
    assert runtime["hashes"] == [{"alg": "SHA-256", "content": hashlib.sha256(binary).hexdigest()}]
    linked = {c["name"]: c for c in runtime["components"]}
    facts = json.loads((REPO / "native/build/dist" / arch / "toolchain.json").read_text())
    musl_pkg = facts["linked"][0]["package"]
    assert linked["musl"]["licenses"] == [{"license": {"id": "MIT"}}]
    assert linked["musl"]["purl"].startswith(f"pkg:deb/debian/musl-dev@{musl_pkg['version']}?")
    assert f"arch={DEB_ARCH[arch]}" in linked["musl"]["purl"]
    assert "GCC-exception-3.1" in linked["libgcc"]["licenses"][0]["expression"]
    compiler = components["build:gcc"]
    assert compiler["scope"] == "excluded" and compiler["version"] == facts["compiler"]["version"]


def test_make_dist_puts_each_sbom_beside_its_wheel(dists: Dists, tmp_path: Path) -> None:
    """`sbom.py extract`, as `make dist` runs it: <wheel>.cdx.json, the same SBOM."""
    wheel = tmp_path / dists.wheels["x86_64"].name
    wheel.write_bytes(dists.wheels["x86_64"].read_bytes())
    argv = [str(SBOM_TOOLS / "bin" / "python"), str(REPO / "scripts" / "sbom.py"), "extract"]
    subprocess.run([*argv, str(wheel)], check=True, capture_output=True)
    beside = wheel.with_suffix(".cdx.json")
    assert json.loads(beside.read_text()) == sbom_of(wheel)
