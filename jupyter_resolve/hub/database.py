"""The usage database: its engine, its URL as the log shows it, and its migrations.

``db_url`` is the same kind of URL as JupyterHub's: ``sqlite:///path`` (the default, one
replica) or ``postgresql://user@host/db`` (any number of replicas), driven by psycopg 3 (the
``hub`` extra). Migrations (:mod:`.migrations`, Alembic) run at the service's start and by
``python -m jupyter_resolve.hub upgrade-db``; on Postgres under an advisory lock, so replicas
starting together migrate once.
"""

from __future__ import annotations

from importlib import resources

from sqlalchemy import Engine, create_engine, event, inspect, text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

from ..contracts.errors import ResolveError
from .schema import VERSION_TABLE

MIGRATION_LOCK = 0x7265736F6C7665  # pg_advisory_lock key: "resolve"
LEGACY_REVISION = "0001"  # the schema the service created before it had migrations
DIALECTS = ("sqlite", "postgresql")


class DatabaseError(ResolveError, RuntimeError):
    """The usage database cannot be used as configured; the message says why."""

    code = "database"


def parse_url(db_url: str) -> URL:
    """``db_url`` with the driver this package installs (``postgresql://`` means psycopg 3)."""
    try:
        url = make_url(db_url)
    except ArgumentError as exc:
        raise DatabaseError(f"ResolveHub.db_url is not a database URL: {exc}") from None
    if url.drivername in ("postgresql", "postgres"):
        url = url.set(drivername="postgresql+psycopg")
    if url.get_backend_name() not in DIALECTS:
        raise DatabaseError(
            f"ResolveHub.db_url: {url.get_backend_name()} is not supported; use sqlite:///… "
            "(one replica) or postgresql://… (any number)"
        )
    return url


def shown(db_url: str) -> str:
    """The URL for the log: the password hidden."""
    try:
        return parse_url(db_url).render_as_string(hide_password=True)
    except DatabaseError:
        return "(not a database URL)"


def _sqlite_pragmas(dbapi_connection: object, _record: object) -> None:
    cursor = dbapi_connection.cursor()  # type: ignore[attr-defined]
    cursor.execute("PRAGMA journal_mode=WAL")  # readers do not wait for the writer
    # with WAL, commits survive the process dying, not the machine losing power: a commit is
    # then not an fsync (each one was ~5 ms of a request's first byte)
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()


def make_engine(db_url: str, pool_size: int) -> Engine:
    url = parse_url(db_url)
    if url.get_backend_name() == "sqlite":
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    return create_engine(url, pool_size=pool_size, max_overflow=pool_size, pool_pre_ping=True)


def _alembic_config(connection: object) -> object:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(resources.files(__package__) / "migrations"))
    config.attributes["connection"] = connection
    return config


def revision(engine: Engine) -> str | None:
    """The schema's revision now: None for an empty database, ``0001`` for one made before
    migrations existed."""
    with engine.connect() as connection:
        return _revision_of(connection)


def head() -> str:
    from alembic.script import ScriptDirectory

    script = ScriptDirectory.from_config(_alembic_config(None))  # type: ignore[arg-type]
    return str(script.get_current_head())


def upgrade(engine: Engine) -> tuple[str | None, str]:
    """Migrate to the newest revision; returns (before, after)."""
    from alembic import command

    with engine.begin() as connection:
        if connection.dialect.name == "postgresql":
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK})
        before = _revision_of(connection)
        config = _alembic_config(connection)
        if before == LEGACY_REVISION and VERSION_TABLE not in inspect(connection).get_table_names():
            command.stamp(config, LEGACY_REVISION)  # type: ignore[arg-type]
        command.upgrade(config, "head")  # type: ignore[arg-type]
        after = _revision_of(connection)
    return before, str(after)


def _revision_of(connection: object) -> str | None:
    tables = set(inspect(connection).get_table_names())
    if VERSION_TABLE in tables:
        row = connection.execute(  # type: ignore[attr-defined]
            text(f"SELECT version_num FROM {VERSION_TABLE}")
        ).first()
        return str(row[0]) if row else None
    return LEGACY_REVISION if "resolve_daily_usage" in tables else None


def ping(engine: Engine) -> None:
    """One round trip (health's readiness); raises what the driver raises."""
    with engine.connect() as connection:
        connection.execute(text("SELECT 1"))
