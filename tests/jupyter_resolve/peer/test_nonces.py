"""Peer nonces on disk: a second store over the same folder (a restarted server) refuses what
the first admitted; rows past the window are pruned; the bound's floor survives a restart."""

from __future__ import annotations

import stat
from pathlib import Path

from jupyter_resolve.peer.nonces import DiskNonces

NOW = 1_800_000_000.0


def test_a_nonce_admitted_before_a_restart_is_refused_after_it(tmp_path: Path) -> None:
    first = DiskNonces(tmp_path / "peer-nonces")
    assert first.admit("alpha", "nonce-0001", NOW, NOW)
    assert not first.admit("alpha", "nonce-0001", NOW, NOW + 1)
    assert first.admit("beta", "nonce-0001", NOW, NOW + 1)  # per peer
    first.close()
    restarted = DiskNonces(tmp_path / "peer-nonces")
    assert not restarted.admit("alpha", "nonce-0001", NOW, NOW + 2)
    assert restarted.admit("alpha", "nonce-0002", NOW, NOW + 2)
    assert stat.S_IMODE((tmp_path / "peer-nonces" / "nonces.sqlite3").stat().st_mode) == 0o600


def test_rows_past_the_window_are_pruned(tmp_path: Path) -> None:
    store = DiskNonces(tmp_path, window=300)
    for i in range(5):
        assert store.admit("p", f"nonce-{i:04}", NOW + i, NOW)
    assert len(store) == 5
    assert store.admit("p", "nonce-late", NOW + 1000, NOW + 1000)
    assert len(store) == 1  # the five are past the window: their timestamps are stale anyway


def test_bounded_with_a_floor_that_survives_a_restart(tmp_path: Path) -> None:
    store = DiskNonces(tmp_path, capacity=3)
    for i in range(3):
        assert store.admit("p", f"n{i}", NOW + i, NOW)
    assert store.admit("p", "n3", NOW + 3, NOW)
    assert len(store) == 3
    # n0 was dropped: its timestamp (and older) is refused from now on, so it cannot come back
    assert not store.admit("p", "n0", NOW, NOW)
    assert not store.admit("p", "other", NOW, NOW)
    store.close()
    restarted = DiskNonces(tmp_path, capacity=3)
    assert not restarted.admit("p", "n0", NOW, NOW)
    assert restarted.admit("p", "later", NOW + 5, NOW)
