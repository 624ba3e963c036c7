"""Engine, sessions and transaction scopes, for SQLite and PostgreSQL alike.

SQLite needs care to be correct under concurrency: WAL (readers never block the writer), a busy
timeout (writers queue instead of failing), and ``BEGIN IMMEDIATE`` for transactions that change
balances — taking the write lock at BEGIN, so two reservations can never both read the old
balance (SQLAlchemy's ``with_for_update()`` is a no-op there). On PostgreSQL the conditional
``UPDATE … RETURNING`` row lock does the same job.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.orm import Session, sessionmaker

#: Seconds a SQLite writer waits for the lock before giving up (``SQLITE_BUSY_TIMEOUT``).
SQLITE_BUSY_TIMEOUT = 30.0

MIGRATIONS = Path(__file__).with_name("migrations")


def _tune_sqlite(engine: Engine, busy_timeout: float) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # we emit BEGIN ourselves, below
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA busy_timeout={round(busy_timeout * 1000)}")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        immediate = connection.get_execution_options().get("immediate", False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


def make_engine(url: str, busy_timeout: float = SQLITE_BUSY_TIMEOUT) -> Engine:
    """An engine for ``url``; SQLite files get their folder created and are tuned."""
    if url.startswith("sqlite"):
        path = url.split("///", 1)[-1]
        if path and path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(
            url, connect_args={"check_same_thread": False, "timeout": busy_timeout}
        )
        _tune_sqlite(engine, busy_timeout)
        return engine
    return create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=20)


class Database:
    """One engine and its session factories; pass it to the storage services."""

    def __init__(self, url: str, busy_timeout: float = SQLITE_BUSY_TIMEOUT):
        self.url = url
        self.engine = make_engine(url, busy_timeout)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        self._writes = sessionmaker(
            self.engine.execution_options(immediate=True), expire_on_commit=False
        )

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A unit of work for reads and ordinary writes; commits on success."""
        with self._sessions.begin() as session:
            yield session

    @contextmanager
    def write(self) -> Iterator[Session]:
        """A unit of work that changes balances: serialised on SQLite (BEGIN IMMEDIATE)."""
        with self._writes.begin() as session:
            yield session

    def ping(self) -> None:
        """Raise if the database does not answer."""
        with self.engine.connect() as connection:
            connection.exec_driver_sql("SELECT 1")

    def dispose(self) -> None:
        self.engine.dispose()


def migrate(url: str, revision: str = "head") -> None:
    """Bring the schema at ``url`` to ``revision`` with Alembic."""
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    command.upgrade(config, revision)
