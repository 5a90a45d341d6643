"""Fixtures for the packaging tests: the dists, built once per session."""

from __future__ import annotations

import pytest

from tests.packaging.dists import Dists, build_dists


@pytest.fixture(scope="session")
def dists(tmp_path_factory: pytest.TempPathFactory) -> Dists:
    return build_dists(tmp_path_factory.mktemp("dist"))
