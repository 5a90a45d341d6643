"""``python -m jupyter_resolve.hub`` as a process: what stops it from starting, said in one line
(no access scope; a cost-only limit over a model without a price; a bad limit), a config file
or key file changed while it runs (read again without a signal, as Kubernetes changes a mounted
ConfigMap), and ``upgrade-db`` on a database made before migrations."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.jupyter_resolve.hub.test_budgets import LEGACY_SCHEMA
from tests.launcher import free_port

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


def wait_for(log: Path, said: str, after: int = 0, timeout: float = 30) -> int:
    """Wait until ``said`` is in the log past character ``after``; where it ends."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = log.read_text()
        found = text.find(said, after)
        if found >= 0:
            return found + len(said)
        time.sleep(0.1)
    raise AssertionError(f"{said!r} not logged; the log:\n{log.read_text()}")


def test_a_changed_config_or_key_file_is_read_again_without_a_signal(tmp_path: Path) -> None:
    config = tmp_path / "jupyter_resolve_hub_config.py"
    key = tmp_path / "openai.key"
    key.write_text("sk-first\n")
    base = (
        "c.ResolveHub.reload_interval = 0.2\n"
        "c.ResolveHub.openai_api_key_file = 'openai.key'\n"
        f"c.ResolveHub.db_url = 'sqlite:///{tmp_path / 'usage.sqlite'}'\n"
    )
    config.write_text(base + "c.ResolveHub.max_concurrent = 4\n")
    log = tmp_path / "service.log"
    clean = {k: v for k, v in os.environ.items() if not k.startswith(HUB_ENV)}
    env = {**clean, **UNDER_HUB, "JUPYTERHUB_SERVICE_URL": f"http://127.0.0.1:{free_port()}"}
    with log.open("w") as out:
        service = subprocess.Popen(
            [sys.executable, "-m", "jupyter_resolve.hub"],
            cwd=tmp_path,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        at = wait_for(log, "max_concurrent 4")  # the start line
        config.write_text(base + "c.ResolveHub.max_concurrent = 9\n")
        at = wait_for(log, "changed: config reloaded; limits: default unlimited", at)
        assert "max_concurrent 9" in log.read_text()[at - 200 :], log.read_text()
        config.write_text(base + "c.ResolveHub.default_limits = {'daily': 5}\n")
        at = wait_for(log, "the config was not reloaded, the old limits stay", at)
        assert "ResolveHub.default_limits.daily" in log.read_text()[at:], log.read_text()
        config.write_text(base + "c.ResolveHub.max_concurrent = 9\n")  # fixed again
        at = wait_for(log, "config reloaded", at)
        key.write_text("sk-rotated\n")  # a Secret's new key: read without a restart
        wait_for(log, "a key file changed: config reloaded", at)
        assert "sk-first" not in log.read_text() and "sk-rotated" not in log.read_text()
    finally:
        service.terminate()
        service.wait(30)
