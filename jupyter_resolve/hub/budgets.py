"""Usage and budgets in the database, shared by every replica (DESIGN 10.5).

A request is admitted by :meth:`UsageStore.reserve`: one conditional ``UPDATE`` of the user's
three ``resolve_budget`` rows (today, this month, in flight) adds its worst case to ``reserved_*``
and one to ``in_flight`` only where the period still has budget left and fewer than
``max_concurrent`` requests are in flight; unless all three rows changed, nothing did. The
database's row locks order concurrent reservations, so with any number of replicas spent never
exceeds a limit by more than one reservation. :meth:`UsageStore.settle` swaps the reservation for
what the upstream reported, once (the reservation row is deleted first); a replica that dies
leaves reservations whose heartbeat stops, and :meth:`UsageStore.expire` charges them in full.

Every method is blocking: the service calls them on its database threads, never on the event
loop. The URL is the same kind as JupyterHub's ``db_url`` (:mod:`.database`).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any, Literal, TypeVar, cast

from sqlalchemy import (
    Connection,
    Engine,
    Table,
    and_,
    case,
    delete,
    func,
    or_,
    select,
    true,
    update,
)
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import DBAPIError

from .limits import Limits, Spent, period_start
from .schema import LIVE, Budget, DailyUsage, Reservation

T = TypeVar("T")
BUDGET = cast(Table, Budget.__table__)
USAGE = cast(Table, DailyUsage.__table__)
HELD = cast(Table, Reservation.__table__)
RETRIES = 4  # a deadlock between two transactions on one user's rows is retried


@dataclass(frozen=True)
class Used:
    """One completion's usage, as the upstream reported it (or as reserved)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class Held:
    """A reservation made: settle it exactly once."""

    id: str
    user: str
    model: str
    day: str
    worst: Used


@dataclass(frozen=True)
class Refusal:
    """Why a reservation was refused: over a budget (``spent`` counts what is reserved too) or
    too many requests in flight."""

    reason: Literal["budget", "concurrency"]
    spent: Spent
    in_flight: int


def day_key(now: datetime) -> str:
    return period_start("day", now).strftime("%Y-%m-%d")


def _upsert(connection: Connection) -> Callable[..., Any]:
    return pg_insert if connection.dialect.name == "postgresql" else sqlite_insert


def _under(tokens: int | None, cost: float | None) -> Any:
    """A budget row's condition: something left of each limit set."""
    conditions = []
    if tokens is not None:
        conditions.append(BUDGET.c.tokens + BUDGET.c.reserved_tokens < tokens)
    if cost is not None:
        conditions.append(BUDGET.c.cost + BUDGET.c.reserved_cost < cost)
    return and_(true(), *conditions)


def _by_period(live: Any, other: Any) -> Any:
    return case((BUDGET.c.period == LIVE, live), else_=other)


class UsageStore:
    """The usage record and the budget counters behind one engine; ``replica`` names this
    process's reservations, kept alive ``ttl`` seconds past each :meth:`heartbeat`."""

    def __init__(
        self, engine: Engine, *, ttl: float = 60.0, clock: Callable[[], float] = time.time
    ) -> None:
        self.engine = engine
        self.replica = uuid.uuid4().hex
        self.ttl = ttl
        self.clock = clock

    def _retrying(self, work: Callable[[], T]) -> T:
        for attempt in range(RETRIES):
            try:
                return work()
            except DBAPIError as exc:  # Postgres: deadlock_detected, serialization_failure
                code = getattr(exc.orig, "sqlstate", None) or getattr(exc.orig, "pgcode", None)
                if code not in ("40P01", "40001") or attempt == RETRIES - 1:
                    raise
        raise AssertionError("unreachable")

    # -- admission ---------------------------------------------------------------------------

    def reserve(
        self, user: str, model: str, worst: Used, limits: Limits, cap: int, now: datetime
    ) -> Held | Refusal:
        """Reserve ``worst`` for ``user`` if every budget has something left and fewer than
        ``cap`` (0: no cap) of their requests are in flight."""
        day = day_key(now)
        for _ in range(3):  # a refusal whose reason is gone when read again is tried again
            held = self._retrying(lambda: self._reserve(user, model, worst, limits, cap, day))
            if held is not None:
                return held
            refusal = self._why_refused(user, day, limits, cap)
            if refusal is not None:
                return refusal
        return Refusal("concurrency", Spent(), cap)

    def _reserve(
        self, user: str, model: str, worst: Used, limits: Limits, cap: int, day: str
    ) -> Held | None:
        """One transaction: the conditional update of the user's three rows and the
        reservation's row; the rows are made first only when the update finds fewer than
        three (a new user, day or month: the first request of each pays for it)."""
        for make_rows in (False, True):
            with self.engine.connect() as connection, connection.begin() as transaction:
                if make_rows:
                    self._ensure_rows(connection, user, (day, day[:7], LIVE))
                admitted = connection.execute(self._admission(user, worst, limits, cap, day))
                if admitted.rowcount != 3:
                    transaction.rollback()
                    continue
                held = Held(uuid.uuid4().hex, user, model, day, worst)
                connection.execute(
                    HELD.insert().values(
                        id=held.id,
                        user=user,
                        model=model,
                        day=day,
                        prompt_tokens=worst.prompt_tokens,
                        completion_tokens=worst.completion_tokens,
                        cost=worst.cost,
                        replica=self.replica,
                        expires=self.clock() + self.ttl,
                    )
                )
                return held
        return None

    @staticmethod
    def _admission(user: str, worst: Used, limits: Limits, cap: int, day: str) -> Any:
        """The one statement that admits a request: its worst case added to today's and this
        month's reservations, and one to those in flight, only where each has room."""
        live = BUDGET.c.period == LIVE
        return (
            update(BUDGET)
            .where(
                BUDGET.c.user == user,
                or_(
                    and_(BUDGET.c.period == day, _under(limits.day_tokens, limits.day_cost)),
                    and_(
                        BUDGET.c.period == day[:7],
                        _under(limits.month_tokens, limits.month_cost),
                    ),
                    and_(live, BUDGET.c.in_flight < cap) if cap > 0 else live,
                ),
            )
            .values(
                reserved_tokens=BUDGET.c.reserved_tokens + _by_period(0, worst.tokens),
                reserved_cost=BUDGET.c.reserved_cost + _by_period(0.0, worst.cost),
                in_flight=BUDGET.c.in_flight + _by_period(1, 0),
            )
        )

    def _ensure_rows(self, connection: Connection, user: str, periods: Iterable[str]) -> None:
        rows = [
            {
                "user": user,
                "period": period,
                "tokens": 0,
                "cost": 0.0,
                "reserved_tokens": 0,
                "reserved_cost": 0.0,
                "in_flight": 0,
            }
            for period in periods
        ]
        insert = _upsert(connection)(BUDGET).values(rows)
        connection.execute(insert.on_conflict_do_nothing(index_elements=["user", "period"]))

    def _why_refused(self, user: str, day: str, limits: Limits, cap: int) -> Refusal | None:
        rows = self.counters(user, day)
        live = rows.get(LIVE, {}).get("in_flight", 0)
        today, month = rows.get(day, {}), rows.get(day[:7], {})

        def used(row: dict[str, Any], kind: str) -> Any:
            return row.get(kind, 0) + row.get(f"reserved_{kind}", 0)

        spent = Spent(
            used(today, "tokens"), used(today, "cost"), used(month, "tokens"), used(month, "cost")
        )
        over = any(
            limit is not None and value >= limit
            for limit, value in (
                (limits.day_tokens, spent.day_tokens),
                (limits.day_cost, spent.day_cost),
                (limits.month_tokens, spent.month_tokens),
                (limits.month_cost, spent.month_cost),
            )
        )
        if over:
            return Refusal("budget", spent, live)
        if cap > 0 and live >= cap:
            return Refusal("concurrency", spent, live)
        return None

    def counters(self, user: str, day: str) -> dict[str, dict[str, Any]]:
        """The user's budget rows of ``day``, its month and in flight, by period."""
        query = select(BUDGET).where(
            BUDGET.c.user == user, BUDGET.c.period.in_((day, day[:7], LIVE))
        )
        with self.engine.connect() as connection:
            return {row.period: dict(row._mapping) for row in connection.execute(query)}

    # -- settling ----------------------------------------------------------------------------

    def settle(self, held: Held, used: Used) -> bool:
        """Replace ``held`` by ``used``; False when it had expired (and was charged in full)."""
        return self._retrying(lambda: self._settle(held.id, held, used))

    def _settle(self, reservation: str, held: Held, used: Used) -> bool:
        with self.engine.begin() as connection:
            gone = connection.execute(delete(HELD).where(HELD.c.id == reservation))
            if gone.rowcount != 1:
                return False
            periods = (held.day, held.day[:7], LIVE)
            connection.execute(
                update(BUDGET)
                .where(BUDGET.c.user == held.user, BUDGET.c.period.in_(periods))
                .values(
                    tokens=BUDGET.c.tokens + _by_period(0, used.tokens),
                    cost=BUDGET.c.cost + _by_period(0.0, used.cost),
                    reserved_tokens=BUDGET.c.reserved_tokens - _by_period(0, held.worst.tokens),
                    reserved_cost=BUDGET.c.reserved_cost - _by_period(0.0, held.worst.cost),
                    in_flight=BUDGET.c.in_flight - _by_period(1, 0),
                )
            )
            if used.tokens or used.cost:
                self._record(connection, held, used)
            return True

    def _record(self, connection: Connection, held: Held, used: Used) -> None:
        insert = _upsert(connection)(USAGE).values(
            user=held.user,
            day=held.day,
            model=held.model,
            requests=1,
            prompt_tokens=used.prompt_tokens,
            completion_tokens=used.completion_tokens,
            cost=used.cost,
        )
        added = insert.excluded
        connection.execute(
            insert.on_conflict_do_update(
                index_elements=["user", "day", "model"],
                set_={
                    "requests": USAGE.c.requests + added.requests,
                    "prompt_tokens": USAGE.c.prompt_tokens + added.prompt_tokens,
                    "completion_tokens": USAGE.c.completion_tokens + added.completion_tokens,
                    "cost": USAGE.c.cost + added.cost,
                },
            )
        )

    def heartbeat(self) -> None:
        """Keep this replica's reservations alive another ``ttl`` seconds."""
        with self.engine.begin() as connection:
            connection.execute(
                update(HELD)
                .where(HELD.c.replica == self.replica)
                .values(expires=self.clock() + self.ttl)
            )

    def expire(self) -> int:
        """Charge in full the reservations whose replica stopped renewing them (it died
        mid-request: the upstream may have answered). Returns how many."""
        query = select(HELD).where(HELD.c.expires < self.clock()).limit(500)
        with self.engine.connect() as connection:
            stale = [dict(row._mapping) for row in connection.execute(query)]
        charged = 0
        for row in stale:
            worst = Used(row["prompt_tokens"], row["completion_tokens"], row["cost"])
            held = Held(row["id"], row["user"], row["model"], row["day"], worst)
            charged += self._retrying(partial(self._settle, held.id, held, held.worst))
        return charged

    # -- reading -----------------------------------------------------------------------------

    def spent(self, user: str, now: datetime) -> Spent:
        """What ``user`` used today and this month (UTC), settled."""
        return self.spent_by_user(now, user).get(user, Spent())

    def spent_by_user(self, now: datetime, user: str | None = None) -> dict[str, Spent]:
        """Today's and this month's usage of every user (or of ``user``) who used any."""
        today = day_key(now)
        query = select(BUDGET.c.user, BUDGET.c.period, BUDGET.c.tokens, BUDGET.c.cost).where(
            BUDGET.c.period.in_((today, today[:7]))
        )
        if user is not None:
            query = query.where(BUDGET.c.user == user)
        totals: dict[str, dict[str, Any]] = {}
        with self.engine.connect() as connection:
            for name, period, tokens, cost in connection.execute(query):
                kind = "day" if period == today else "month"
                row = totals.setdefault(name, {})
                row[f"{kind}_tokens"], row[f"{kind}_cost"] = int(tokens), float(cost)
        return {name: Spent(**row) for name, row in totals.items() if any(row.values())}

    def daily(self, days: list[str]) -> dict[str, tuple[int, float]]:
        """Tokens and cost of everyone per day, for ``days``."""
        tokens = func.sum(USAGE.c.prompt_tokens + USAGE.c.completion_tokens)
        query = (
            select(USAGE.c.day, tokens, func.sum(USAGE.c.cost))
            .where(USAGE.c.day.in_(days))
            .group_by(USAGE.c.day)
        )
        with self.engine.connect() as connection:
            return {d: (int(t or 0), float(c or 0.0)) for d, t, c in connection.execute(query)}

    def top_users(self, now: datetime, limit: int) -> list[tuple[str, int, float]]:
        """This month's biggest users: (name, tokens, cost), most tokens first."""
        month = day_key(now)[:7]
        query = (
            select(BUDGET.c.user, BUDGET.c.tokens, BUDGET.c.cost)
            .where(BUDGET.c.period == month, BUDGET.c.tokens > 0)
            .order_by(BUDGET.c.tokens.desc(), BUDGET.c.user)
            .limit(limit)
        )
        with self.engine.connect() as connection:
            return [(str(u), int(t), float(c)) for u, t, c in connection.execute(query)]

    def close(self) -> None:
        self.engine.dispose()
