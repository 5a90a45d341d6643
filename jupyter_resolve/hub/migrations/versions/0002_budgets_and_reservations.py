"""Budgets decided in the database: per-period counters and reservations (issue 48).

The counters of every existing day and month are filled from the usage record, so what a user
spent before the upgrade still counts against their limits.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "resolve_budget",
        sa.Column("user", sa.String(255), primary_key=True),
        sa.Column("period", sa.String(10), primary_key=True),
        sa.Column("tokens", sa.Integer, nullable=False, server_default="0"),
        sa.Column("cost", sa.Float, nullable=False, server_default="0"),
        sa.Column("reserved_tokens", sa.Integer, nullable=False, server_default="0"),
        sa.Column("reserved_cost", sa.Float, nullable=False, server_default="0"),
        sa.Column("in_flight", sa.Integer, nullable=False, server_default="0"),
    )
    op.create_table(
        "resolve_reservation",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("user", sa.String(255), nullable=False, index=True),
        sa.Column("model", sa.String(255), nullable=False),
        sa.Column("day", sa.String(10), nullable=False),
        sa.Column("prompt_tokens", sa.Integer, nullable=False),
        sa.Column("completion_tokens", sa.Integer, nullable=False),
        sa.Column("cost", sa.Float, nullable=False),
        sa.Column("replica", sa.String(32), nullable=False, index=True),
        sa.Column("expires", sa.Float, nullable=False, index=True),
    )
    tokens = "SUM(prompt_tokens + completion_tokens)"
    for period in ("day", "substr(day, 1, 7)"):
        op.execute(
            'INSERT INTO resolve_budget ("user", period, tokens, cost, reserved_tokens, '
            f'reserved_cost, in_flight) SELECT "user", {period}, {tokens}, SUM(cost), 0, 0, 0 '
            f'FROM resolve_daily_usage GROUP BY "user", {period}'
        )


def downgrade() -> None:
    op.drop_table("resolve_reservation")
    op.drop_table("resolve_budget")
