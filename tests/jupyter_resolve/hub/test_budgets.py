"""The hub service's usage database (jupyter_resolve.hub.budgets, .database), on SQLite and on a
real PostgreSQL (tests/hub/postgres.py): migrations from an empty database and from the schema
made before migrations; reservations that hold under concurrency from two engines (two
replicas), the per-user cap on requests in flight, settling once, and expiry."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import pytest
from sqlalchemy import Engine, inspect, text

from jupyter_resolve.hub.budgets import Held, Refusal, UsageStore, Used
from jupyter_resolve.hub.database import head, make_engine, revision, upgrade
from jupyter_resolve.hub.limits import Limits
from tests.hub.postgres import pg_bin, running_postgres

NOW = datetime(2026, 12, 31, 18, 30, tzinfo=timezone.utc)
LEGACY_SCHEMA = """CREATE TABLE resolve_daily_usage (
    "user" VARCHAR(255) NOT NULL, day VARCHAR(10) NOT NULL, model VARCHAR(255) NOT NULL,
    requests INTEGER NOT NULL, prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL,
    cost FLOAT NOT NULL, PRIMARY KEY ("user", day, model))"""


@pytest.fixture(scope="module")
def postgres() -> Iterator[str]:
    if pg_bin() is None:
        pytest.skip("PostgreSQL is not installed (make setup installs Debian's postgresql)")
    with running_postgres() as url:
        yield url


def _reset(url: str) -> None:
    engine = make_engine(url, 1)
    with engine.begin() as connection:
        for table in reversed(inspect(connection).get_table_names()):
            connection.execute(text(f"DROP TABLE {table}"))
    engine.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'usage.sqlite'}"
        return
    url = request.getfixturevalue("postgres")
    _reset(url)
    yield url


@pytest.fixture
def engine(db_url: str) -> Iterator[Engine]:
    engine = make_engine(db_url, 20)
    upgrade(engine)
    yield engine
    engine.dispose()


def test_migrations_from_an_empty_database(db_url: str) -> None:
    engine = make_engine(db_url, 1)
    assert revision(engine) is None
    assert upgrade(engine) == (None, head())
    assert upgrade(engine) == (head(), head())  # again: nothing to do
    tables = set(inspect(engine).get_table_names())
    assert {"resolve_daily_usage", "resolve_budget", "resolve_reservation"} <= tables
    assert "resolve_alembic_version" in tables and "alembic_version" not in tables
    engine.dispose()


def test_migrations_from_the_schema_before_migrations_keep_what_was_spent(db_url: str) -> None:
    engine = make_engine(db_url, 1)
    with engine.begin() as connection:
        connection.execute(text(LEGACY_SCHEMA))
        connection.execute(
            text(
                "INSERT INTO resolve_daily_usage VALUES "
                "('bob', '2026-12-31', 'm', 2, 30, 20, 0.5), "
                "('bob', '2026-12-30', 'm', 1, 10, 5, 0.25)"
            )
        )
    assert revision(engine) == "0001"
    assert upgrade(engine) == ("0001", head())
    store = UsageStore(engine)
    spent = store.spent("bob", NOW)
    assert (spent.day_tokens, spent.month_tokens) == (50, 65)
    assert spent.month_cost == pytest.approx(0.75)
    refused = store.reserve("bob", "m", Used(10, 10), Limits(day_tokens=50), 4, NOW)
    assert isinstance(refused, Refusal) and refused.reason == "budget"
    engine.dispose()


def test_a_reservation_settles_to_the_reported_usage_once(engine: Engine) -> None:
    store = UsageStore(engine)
    held = store.reserve("alice", "m", Used(100, 400, 0.5), Limits(day_tokens=1000), 4, NOW)
    assert isinstance(held, Held)
    counters = store.counters("alice", "2026-12-31")
    assert counters["2026-12-31"]["reserved_tokens"] == 500
    assert counters["live"]["in_flight"] == 1
    assert store.settle(held, Used(20, 30, 0.01)) is True
    assert store.settle(held, Used(20, 30, 0.01)) is False  # once
    counters = store.counters("alice", "2026-12-31")
    assert counters["2026-12-31"]["tokens"] == 50 and counters["2026-12-31"]["reserved_tokens"] == 0
    assert counters["2026-12"]["tokens"] == 50 and counters["live"]["in_flight"] == 0
    assert store.spent("alice", NOW).day_tokens == 50
    assert store.daily(["2026-12-31"]) == {"2026-12-31": (50, pytest.approx(0.01))}
    assert store.top_users(NOW, 5) == [("alice", 50, pytest.approx(0.01))]


def test_the_fifth_request_in_flight_is_refused(engine: Engine) -> None:
    store = UsageStore(engine)
    held = [store.reserve("carol", "m", Used(1, 1), Limits(), 4, NOW) for _ in range(4)]
    assert all(isinstance(h, Held) for h in held)
    fifth = store.reserve("carol", "m", Used(1, 1), Limits(), 4, NOW)
    assert isinstance(fifth, Refusal) and fifth.reason == "concurrency" and fifth.in_flight == 4
    assert isinstance(store.reserve("dave", "m", Used(1, 1), Limits(), 4, NOW), Held)
    store.settle(held[0], Used(1, 1))  # type: ignore[arg-type]
    assert isinstance(store.reserve("carol", "m", Used(1, 1), Limits(), 4, NOW), Held)
    assert isinstance(store.reserve("carol", "m", Used(1, 1), Limits(), 0, NOW), Held)  # no cap


def test_concurrent_requests_from_two_replicas_hold_the_budget(db_url: str) -> None:
    """16 requests at once through two engines (two replicas): spent never passes the limit
    by more than one reservation, and every reported token is counted."""
    limit, worst, used = 6000, Used(100, 4000), Used(90, 1200)
    engines = [make_engine(db_url, 20) for _ in range(2)]
    upgrade(engines[0])
    stores = [UsageStore(e) for e in engines]
    admitted: list[Held] = []
    refused: list[Refusal] = []
    barrier = threading.Barrier(16)

    def one(n: int) -> None:
        store = stores[n % 2]
        barrier.wait()
        got = store.reserve("erin", "m", worst, Limits(day_tokens=limit), 0, NOW)
        if isinstance(got, Refusal):
            refused.append(got)
            return
        admitted.append(got)
        store.settle(got, used)

    threads = [threading.Thread(target=one, args=(n,)) for n in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    spent = stores[0].spent("erin", NOW).day_tokens
    assert len(admitted) + len(refused) == 16
    assert spent == len(admitted) * used.tokens  # none lost, none doubled
    assert spent <= limit + worst.tokens
    assert all(r.reason == "budget" for r in refused) and refused
    counters = stores[1].counters("erin", "2026-12-31")
    assert counters["2026-12-31"]["reserved_tokens"] == 0 and counters["live"]["in_flight"] == 0
    for engine in engines:
        engine.dispose()


def test_a_dead_replicas_reservations_expire_and_are_charged_in_full(engine: Engine) -> None:
    now = [1000.0]
    dead = UsageStore(engine, ttl=60, clock=lambda: now[0])
    alive = UsageStore(engine, ttl=60, clock=lambda: now[0])
    held = dead.reserve("frank", "m", Used(10, 90), Limits(), 1, NOW)
    mine = alive.reserve("gina", "m", Used(1, 1), Limits(), 1, NOW)
    assert isinstance(held, Held) and isinstance(mine, Held)
    now[0] += 45
    alive.heartbeat()  # the living replica renews its own
    assert alive.expire() == 0
    now[0] += 30
    assert alive.expire() == 1  # frank's: its replica stopped renewing
    assert alive.spent("frank", NOW).day_tokens == 100
    assert dead.settle(held, Used(1, 1)) is False  # charged already, not twice
    assert alive.spent("frank", NOW).day_tokens == 100
    assert isinstance(alive.reserve("frank", "m", Used(1, 1), Limits(), 1, NOW), Held)
    assert alive.settle(mine, Used(1, 1)) is True
