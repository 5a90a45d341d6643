"""Fixtures for the packaging tests: the dists, built once per session."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.packaging.dists import Dists, build_dists

HERE = Path(__file__).parent
# The first test to ask for the dists builds them (two static runtimes, each wheel's SBOM from
# the CycloneDX tools): longer than one test's usual time limit on two busy cores.
BUILD_TIMEOUT = 900


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(pytest.mark.timeout(BUILD_TIMEOUT))


@pytest.fixture(scope="session")
def dists(tmp_path_factory: pytest.TempPathFactory) -> Dists:
    return build_dists(tmp_path_factory.mktemp("dist"))
