"""The usage database's tables (SQLAlchemy), at the newest revision of :mod:`.migrations`.

- ``resolve_daily_usage``: the record, one row per (user, UTC day, model): requests, prompt and
  completion tokens, cost. The admin page's chart and the usage answers read it.
- ``resolve_budget``: what decides a budget, one row per (user, period): ``period`` is a UTC day
  (``2026-12-31``), a month (``2026-12``) or :data:`LIVE` (the user's requests in flight).
  ``tokens`` and ``cost`` are settled usage; ``reserved_*`` the worst cases of the requests in
  flight. Admission is one conditional ``UPDATE`` of the user's three rows (:mod:`.budgets`).
- ``resolve_reservation``: one row per request in flight, so a settle happens once and a replica
  that died leaves rows that expire (its heartbeat stops) and are then charged in full.

Every table carries the ``resolve_`` prefix and the version table is
``resolve_alembic_version``, so the service may share a database with JupyterHub itself.
"""

from __future__ import annotations

from sqlalchemy import Float, Integer, MetaData, String
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

LIVE = "live"  # the period of the in-flight counter row
VERSION_TABLE = "resolve_alembic_version"


class Base(DeclarativeBase):
    metadata = MetaData()


class DailyUsage(Base):
    __tablename__ = "resolve_daily_usage"

    user: Mapped[str] = mapped_column(String(255), primary_key=True)
    day: Mapped[str] = mapped_column(String(10), primary_key=True)  # YYYY-MM-DD, UTC
    model: Mapped[str] = mapped_column(String(255), primary_key=True)
    requests: Mapped[int] = mapped_column(Integer, default=0)
    prompt_tokens: Mapped[int] = mapped_column(Integer, default=0)
    completion_tokens: Mapped[int] = mapped_column(Integer, default=0)
    cost: Mapped[float] = mapped_column(Float, default=0.0)


class Budget(Base):
    __tablename__ = "resolve_budget"

    user: Mapped[str] = mapped_column(String(255), primary_key=True)
    period: Mapped[str] = mapped_column(String(10), primary_key=True)
    tokens: Mapped[int] = mapped_column(Integer, default=0)
    cost: Mapped[float] = mapped_column(Float, default=0.0)
    reserved_tokens: Mapped[int] = mapped_column(Integer, default=0)
    reserved_cost: Mapped[float] = mapped_column(Float, default=0.0)
    in_flight: Mapped[int] = mapped_column(Integer, default=0)


class Reservation(Base):
    __tablename__ = "resolve_reservation"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    user: Mapped[str] = mapped_column(String(255), index=True)
    model: Mapped[str] = mapped_column(String(255))
    day: Mapped[str] = mapped_column(String(10))
    prompt_tokens: Mapped[int] = mapped_column(Integer)  # the estimate reserved
    completion_tokens: Mapped[int] = mapped_column(Integer)  # max_tokens, or the cap
    cost: Mapped[float] = mapped_column(Float)
    replica: Mapped[str] = mapped_column(String(32), index=True)
    expires: Mapped[float] = mapped_column(Float, index=True)  # epoch seconds
