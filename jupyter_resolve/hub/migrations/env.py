"""Alembic's environment: the connection comes from :func:`..database.upgrade`."""

from __future__ import annotations

from alembic import context

from jupyter_resolve.hub.schema import VERSION_TABLE, Base

connection = context.config.attributes["connection"]
context.configure(
    connection=connection,
    target_metadata=Base.metadata,
    version_table=VERSION_TABLE,
    render_as_batch=connection.dialect.name == "sqlite",
)
with context.begin_transaction():
    context.run_migrations()
