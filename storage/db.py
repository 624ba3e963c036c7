"""Engine, sessions and transaction scopes, for SQLite and PostgreSQL alike.

SQLite needs care to be correct under concurrency: WAL (readers never block the writer), a busy
timeout (writers queue instead of failing), and ``BEGIN IMMEDIATE`` for transactions that change
balances — taking the write lock at BEGIN, so two reservations can never both read the old
balance (SQLAlchemy's ``with_for_update()`` is a no-op there). On PostgreSQL the conditional
``UPDATE … RETURNING`` row lock does the same job.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import sqlite3
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.orm import Session, sessionmaker

from core.config.kinds import database_url

if TYPE_CHECKING:
    from core.config import StorageConfig

#: Seconds a SQLite writer waits for the lock (or PostgreSQL for a connection) before giving
#: up; the API passes ``DATABASE_TIMEOUT``.
DEFAULT_TIMEOUT = 30.0
#: Seconds the health check waits for the write lock: it must answer while a client still cares.
HEALTH_TIMEOUT = 2.0

#: Messages of SQLite errors that mean "the database cannot serve now", not "our SQL is wrong"
#: (``no such table`` is a bug and stays a 500).
SQLITE_UNAVAILABLE = (
    "database is locked", "database table is locked", "readonly database",
    "unable to open database file", "disk i/o error", "database or disk is full",
)
#: PostgreSQL SQLSTATE classes that mean the same: connection exception, insufficient
#: resources, operator intervention (shutdown, "cannot connect now").
POSTGRES_UNAVAILABLE = ("08", "53", "57P")
#: read_only_sql_transaction: a standby, or ``default_transaction_read_only`` (an InternalError).
POSTGRES_READ_ONLY = "25006"

MIGRATIONS = Path(__file__).with_name("migrations")


def unavailable(exc: BaseException) -> bool:
    """Whether a database error means the database is down, locked, read-only or full (503
    ``unavailable``, worth a retry) rather than a fault of ours (a 500 to look into). A
    connection pool with no free connection within its timeout is busy, not broken."""
    if isinstance(exc, PoolTimeout):
        return True
    if not isinstance(exc, DBAPIError):
        return False
    if exc.connection_invalidated:
        return True
    orig = exc.orig
    if isinstance(orig, sqlite3.OperationalError):
        return any(marker in str(orig).lower() for marker in SQLITE_UNAVAILABLE)
    if type(orig).__module__.startswith("psycopg2"):
        import psycopg2

        code = getattr(orig, "pgcode", None)
        if code == POSTGRES_READ_ONLY:
            return True
        if not isinstance(orig, psycopg2.OperationalError):
            return False
        # No SQLSTATE: the client library failed (refused, reset, timed out, server gone).
        return code is None or code.startswith(POSTGRES_UNAVAILABLE)
    return False


def _tune_sqlite(engine: Engine, timeout: float) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # we emit BEGIN ourselves, below
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA busy_timeout={int(timeout * 1000)}")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        immediate = connection.get_execution_options().get("immediate", False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


#: Mode of the SQLite database file; SQLite gives its -wal and -shm files the same one.
SQLITE_FILE_MODE = 0o600


def sqlite_path(url: str) -> Path | None:
    """The file of a SQLite ``url``; None for another database or an in-memory one."""
    if not url.startswith("sqlite") or "///" not in url:
        return None
    path = url.split("///", 1)[-1].split("?", 1)[0]
    return Path(path) if path and path != ":memory:" else None


def secure_sqlite_file(url: str) -> None:
    """Create the SQLite file of ``url`` readable by its owner only (accounts, key hashes and
    history are in it), and tighten one created world-readable before; then its -wal and -shm
    files, which SQLite creates with the database file's mode, are private too."""
    path = sqlite_path(url)
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    # Only ever open a file that does not exist yet: closing any descriptor of a database file
    # drops the locks this process's SQLite connections hold on it (POSIX advisory locks).
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, SQLITE_FILE_MODE))
    for file in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        with contextlib.suppress(FileNotFoundError):
            info = file.stat()
            if info.st_mode & 0o077 and info.st_uid == os.getuid():
                file.chmod(SQLITE_FILE_MODE)


def make_engine(url: str, timeout: float = DEFAULT_TIMEOUT) -> Engine:
    """An engine for ``url`` (any form ``DATABASE_URL`` takes: ``postgres://`` and
    ``postgresql://`` mean psycopg2); SQLite files get their folder created and are tuned.

    ``timeout``: seconds to wait for SQLite's write lock, or for a PostgreSQL connection.
    """
    url = database_url(url)
    if url.startswith("sqlite"):
        secure_sqlite_file(url)
        engine = create_engine(
            url, connect_args={"check_same_thread": False, "timeout": timeout}
        )
        _tune_sqlite(engine, timeout)
        return engine
    return create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=20,
                         pool_timeout=timeout,
                         connect_args={"connect_timeout": max(1, math.ceil(timeout))})


#: Every database of the process, so that a forked child can let go of the parent's pools.
_opened: weakref.WeakSet[Database] = weakref.WeakSet()


def _forget_inherited_connections() -> None:
    """In a forked child (gunicorn's preloaded workers, :mod:`worker.pool`): new pools, the
    parent's connections left open for the parent (SQLAlchemy's ``dispose(close=False)``):
    two processes on one connection would mix their conversations."""
    for database in list(_opened):
        database.engine.dispose(close=False)


os.register_at_fork(after_in_child=_forget_inherited_connections)


class Database:
    """One engine and its session factories; pass it to the storage services."""

    def __init__(self, url: str, timeout: float = DEFAULT_TIMEOUT):
        self.url = database_url(url)
        self.engine = make_engine(url, timeout)
        _opened.add(self)
        self._busy_timeout_ms = int(timeout * 1000)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        self._write_engine = self.engine.execution_options(immediate=True)
        self._writes = sessionmaker(self._write_engine, expire_on_commit=False)

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A unit of work for reads and ordinary writes; commits on success."""
        with self._sessions.begin() as session:
            yield session

    @contextmanager
    def write(self) -> Iterator[Session]:
        """A unit of work that reads then writes (balances, accounts, keys): serialised on
        SQLite (BEGIN IMMEDIATE), where a plain transaction that reads first fails at once
        ("database is locked") when another connection wrote meanwhile."""
        with self._writes.begin() as session:
            yield session

    @contextmanager
    def connection(self) -> Iterator[Connection]:
        """A bare connection, for the reads every request makes (its key): SQL statements
        without an ORM session's unit of work around them, which cost several times the
        statement itself on that path (docs/benchmarks.md, Scrape latency)."""
        with self.engine.connect() as connection:
            yield connection

    @contextmanager
    def write_transaction(self) -> Iterator[Connection]:
        """:meth:`write`'s transaction (serialised on SQLite) on a bare connection: for the
        writes every billed request makes (a reservation, its capture)."""
        with self._write_engine.begin() as connection:
            yield connection

    def check_writable(self) -> None:
        """Raise unless a write could happen now: the cheap part of one, rolled back.

        A read answers while the database is locked or read-only, so the health check takes
        the write lock (SQLite: ``BEGIN IMMEDIATE``, waiting at most :data:`HEALTH_TIMEOUT`) and
        on PostgreSQL runs an ``UPDATE`` that matches no row (refused by a read-only server or
        transaction), then rolls back.
        """
        with self.engine.connect() as connection:
            if self.engine.dialect.name == "sqlite":
                raw = connection.connection.driver_connection  # we emit BEGIN ourselves
                raw.execute(f"PRAGMA busy_timeout={int(HEALTH_TIMEOUT * 1000)}")
                try:
                    raw.execute("BEGIN IMMEDIATE")
                    raw.execute("ROLLBACK")
                finally:
                    raw.execute(f"PRAGMA busy_timeout={self._busy_timeout_ms}")
                return
            with connection.begin() as transaction:
                connection.exec_driver_sql("UPDATE accounts SET balance = balance WHERE 1 = 0")
                transaction.rollback()

    def dispose(self) -> None:
        self.engine.dispose()


@functools.cache
def shared(url: str, timeout: float = DEFAULT_TIMEOUT) -> Database:
    """One :class:`Database` per process and URL (its connection pool serves every job of a
    worker process: the sweeps, the collections' slices)."""
    return Database(url, timeout)


def shared_for(storage: StorageConfig) -> Database:
    """The process's :func:`shared` database of the deployment's storage (``DATABASE_URL``,
    ``DATABASE_TIMEOUT``)."""
    return shared(storage.database_url, storage.database_timeout)


def migrate(url: str, revision: str = "head") -> None:
    """Bring the schema at ``url`` to ``revision`` with Alembic."""
    from alembic import command
    from alembic.config import Config

    url = database_url(url)
    secure_sqlite_file(url)  # before Alembic's engine would create it world-readable
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    command.upgrade(config, revision)
