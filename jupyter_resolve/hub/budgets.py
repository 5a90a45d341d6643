"""Usage per user, day and model, kept through SQLAlchemy (SQLite by default).

One row per (user, UTC day, model) holds the requests, prompt and completion tokens and cost of
that day; a month is the sum of its days. The URL is the same kind as JupyterHub's ``db_url``:
``sqlite:///jupyter_resolve_hub.sqlite`` or ``postgresql://...``. Writes are small and few (one
per completion), so they run on the service's thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Float, Integer, String, create_engine, func, select
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

from .limits import Spent, period_start


class Base(DeclarativeBase):
    pass


class DailyUsage(Base):
    __tablename__ = "resolve_daily_usage"

    user: Mapped[str] = mapped_column(String(255), primary_key=True)
    day: Mapped[str] = mapped_column(String(10), primary_key=True)  # YYYY-MM-DD, UTC
    model: Mapped[str] = mapped_column(String(255), primary_key=True)
    requests: Mapped[int] = mapped_column(Integer, default=0)
    prompt_tokens: Mapped[int] = mapped_column(Integer, default=0)
    completion_tokens: Mapped[int] = mapped_column(Integer, default=0)
    cost: Mapped[float] = mapped_column(Float, default=0.0)


@dataclass(frozen=True)
class Used:
    """One completion's usage, as the upstream reported it."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


def day_key(now: datetime) -> str:
    return period_start("day", now).strftime("%Y-%m-%d")


class UsageStore:
    """The usage table behind ``db_url``; created on first use."""

    def __init__(self, db_url: str) -> None:
        self.engine = create_engine(db_url)
        Base.metadata.create_all(self.engine)

    def record(self, user: str, model: str, used: Used, now: datetime) -> None:
        with Session(self.engine) as session, session.begin():
            key = {"user": user, "day": day_key(now), "model": model}
            row = session.get(DailyUsage, key)
            if row is None:
                row = DailyUsage(**key, requests=0, prompt_tokens=0, completion_tokens=0, cost=0.0)
                session.add(row)
            row.requests += 1
            row.prompt_tokens += used.prompt_tokens
            row.completion_tokens += used.completion_tokens
            row.cost += used.cost

    def spent(self, user: str, now: datetime) -> Spent:
        """What ``user`` used today and this month (UTC)."""
        return self.spent_by_user(now, user).get(user, Spent())

    def spent_by_user(self, now: datetime, user: str | None = None) -> dict[str, Spent]:
        """Today's and this month's usage of every user (or of ``user``) who used any."""
        today = day_key(now)
        month = today[:8]  # YYYY-MM-
        tokens = DailyUsage.prompt_tokens + DailyUsage.completion_tokens
        query = select(
            DailyUsage.user, DailyUsage.day, func.sum(tokens), func.sum(DailyUsage.cost)
        ).where(DailyUsage.day.startswith(month))
        if user is not None:
            query = query.where(DailyUsage.user == user)
        query = query.group_by(DailyUsage.user, DailyUsage.day)
        totals: dict[str, list[float]] = {}
        with Session(self.engine) as session:
            for name, day, day_tokens, day_cost in session.execute(query):
                row = totals.setdefault(name, [0, 0.0, 0, 0.0])
                if day == today:
                    row[0] += int(day_tokens or 0)
                    row[1] += float(day_cost or 0.0)
                row[2] += int(day_tokens or 0)
                row[3] += float(day_cost or 0.0)
        return {
            name: Spent(int(r[0]), float(r[1]), int(r[2]), float(r[3]))
            for name, r in totals.items()
        }

    def close(self) -> None:
        self.engine.dispose()
