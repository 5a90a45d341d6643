"""The usage record: one row per (user, UTC day, model).

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "resolve_daily_usage",
        sa.Column("user", sa.String(255), primary_key=True),
        sa.Column("day", sa.String(10), primary_key=True),
        sa.Column("model", sa.String(255), primary_key=True),
        sa.Column("requests", sa.Integer, nullable=False),
        sa.Column("prompt_tokens", sa.Integer, nullable=False),
        sa.Column("completion_tokens", sa.Integer, nullable=False),
        sa.Column("cost", sa.Float, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("resolve_daily_usage")
