"""``python -m jupyter_resolve.hub`` as a process: what stops it from starting, said in one line
(no access scope; a cost-only limit over a model without a price; a bad limit), and
``upgrade-db`` on a database made before migrations."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.jupyter_resolve.hub.test_budgets import LEGACY_SCHEMA

HUB_ENV = ("JUPYTERHUB_", "OPENAI_API_KEY", "ANTHROPIC_API_KEY")


def run(
    cwd: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(HUB_ENV)}
    return subprocess.run(
        [sys.executable, "-m", "jupyter_resolve.hub", *args],
        cwd=cwd,
        env={**clean, **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
    )


UNDER_HUB = {"JUPYTERHUB_SERVICE_NAME": "resolve", "JUPYTERHUB_API_TOKEN": "t"}


def test_no_access_scope_no_start(tmp_path: Path) -> None:
    done = run(tmp_path, "--ResolveHub.bind_url=http://127.0.0.1:9")
    assert done.returncode == 1
    assert "not started: no access scope" in done.stderr, done.stderr
    assert "any hub token would get in" in done.stderr


@pytest.mark.parametrize(
    ("config", "said"),
    [
        (
            "c.ResolveHub.default_limits = {'month_cost': 5, 'models': ['house-model-x']}",
            "no price: house-model-x",
        ),
        (
            "c.ResolveHub.group_limits = {'students': {'day_tokens': -5}}",
            "ResolveHub.group_limits['students'].day_tokens",
        ),
        (
            "c.ResolveHub.default_limits = {'daily': 5}",
            "ResolveHub.default_limits.daily",
        ),
    ],
)
def test_a_config_it_cannot_use_stops_the_start_naming_the_entry(
    tmp_path: Path, config: str, said: str
) -> None:
    (tmp_path / "jupyter_resolve_hub_config.py").write_text(config + "\n")
    done = run(tmp_path, env=UNDER_HUB)
    assert done.returncode == 1, done.stderr
    assert said in done.stderr, done.stderr
    assert not (tmp_path / "jupyter_resolve_hub.sqlite").exists()  # stopped before the database


def test_upgrade_db_migrates_a_database_made_before_migrations(tmp_path: Path) -> None:
    path = tmp_path / "usage.sqlite"
    with sqlite3.connect(path) as db:
        db.execute(LEGACY_SCHEMA)
    done = run(tmp_path, "upgrade-db", f"--ResolveHub.db_url=sqlite:///{path}")
    assert done.returncode == 0, done.stderr
    assert "migrated from 0001 to revision 0002" in done.stderr
    again = run(tmp_path, "upgrade-db", f"--ResolveHub.db_url=sqlite:///{path}")
    assert "already at revision 0002" in again.stderr
