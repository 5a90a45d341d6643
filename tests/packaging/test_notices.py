"""What the release files must say about themselves (issue 50.4): the project's BSD-3-Clause
license in the sdist and in each wheel's metadata; beside the static agent-httpd, the notices of
what its static link put into it (musl's MIT text, GCC's runtime); the panel's
third-party-licenses.json kept."""

from __future__ import annotations

import json
import tarfile
import zipfile
from pathlib import Path

import pytest

from tests.packaging.dists import ARCHES, REPO, Dists, extract_runtime, wheel_text

LICENSE = (REPO / "LICENSE").read_text()


def test_the_license_is_the_projects_bsd_3_clause() -> None:
    assert LICENSE.startswith("BSD 3-Clause License")
    assert "Copyright (c) 2026, The jupyter-resolve developers" in LICENSE
    assert "Neither the name of the copyright holder" in LICENSE


def test_the_sdist_carries_the_license(dists: Dists) -> None:
    with tarfile.open(dists.sdist) as sdist:
        top = sdist.getnames()[0].split("/")[0]
        text = sdist.extractfile(f"{top}/LICENSE")
        assert text is not None and text.read().decode() == LICENSE
        pkg_info = sdist.extractfile(f"{top}/PKG-INFO")
        assert pkg_info is not None
        metadata = pkg_info.read().decode()
    assert "License-Expression: BSD-3-Clause" in metadata.splitlines()
    assert "License-File: LICENSE" in metadata.splitlines()


@pytest.mark.parametrize("arch", ARCHES)
def test_the_wheels_metadata_carries_the_license(dists: Dists, arch: str) -> None:
    wheel = dists.wheels[arch]
    metadata = wheel_text(wheel, ".dist-info/METADATA").split("\n\n", 1)[0].splitlines()
    assert "License-Expression: BSD-3-Clause" in metadata
    assert "License-File: LICENSE" in metadata
    assert wheel_text(wheel, ".dist-info/licenses/LICENSE") == LICENSE


@pytest.mark.parametrize("arch", ARCHES)
def test_the_runtime_ships_with_the_notices_of_what_it_links(
    dists: Dists, arch: str, tmp_path: Path
) -> None:
    wheel = dists.wheels[arch]
    with zipfile.ZipFile(wheel) as whl:
        names = set(whl.namelist())
    assert "jupyter_resolve/bin/agent-httpd.NOTICE" in names
    notice = " ".join(wheel_text(wheel, "jupyter_resolve/bin/agent-httpd.NOTICE").split())
    assert f"agent-httpd ({arch})" in notice
    facts = json.loads((REPO / "native/build/dist" / arch / "toolchain.json").read_text())
    musl, libgcc = facts["linked"]
    assert f"musl libc {musl['version']}" in notice and "under the MIT license" in notice
    # musl's own copyright and license text, as its Debian package ships it
    assert "Rich Felker" in notice
    assert "Permission is hereby granted, free of charge" in notice
    assert f"GCC {libgcc['version']}'s runtime" in notice
    assert "GCC Runtime Library Exception" in notice
    # musl, not static glibc (whose LGPL would want a way to relink): no glibc inside
    binary = extract_runtime(wheel, tmp_path).read_bytes()
    assert b"glibc" not in binary.lower()


@pytest.mark.parametrize("arch", ARCHES)
def test_the_panels_third_party_licenses_are_kept(dists: Dists, arch: str) -> None:
    suffix = "share/jupyter/labextensions/jupyter-resolve/static/third-party-licenses.json"
    bundled = json.loads(wheel_text(dists.wheels[arch], suffix))["packages"]
    assert bundled, "the panel bundles some npm code (webpack's style and css loaders)"
    for package in bundled:
        assert package["name"] and package["versionInfo"] and package["licenseId"], package
