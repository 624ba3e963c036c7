"""A database that cannot serve — locked by another process, unreachable, not a database —
is answered 503 ``unavailable`` (not 500), ``/healthz`` names it, and nothing is lost."""

from __future__ import annotations

import subprocess
import sys
import uuid
from urllib.parse import urlsplit, urlunsplit

import pytest

from api import create_app
from storage.db import migrate
from tests.conftest import make_config, new_customer
from tests.support.books import assert_books_balance

LOCKER = """
import sqlite3, sys
connection = sqlite3.connect(sys.argv[1], isolation_level=None)
connection.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
sys.stdin.read()  # hold the lock until the test closes our stdin
connection.execute("ROLLBACK")
"""


@pytest.fixture
def locked_sqlite(tmp_path):
    """A migrated SQLite file and a function that locks it from another process (until the
    returned process's stdin is closed)."""
    path = tmp_path / "locked.db"
    migrate(f"sqlite:///{path}")
    started = []

    def lock() -> subprocess.Popen:
        proc = subprocess.Popen([sys.executable, "-c", LOCKER, str(path)], text=True,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert proc.stdout.readline().strip() == "locked"
        started.append(proc)
        return proc

    yield path, lock
    for proc in started:
        with proc:  # closes its pipes, waits for it
            proc.kill()


def _unavailable(response) -> dict:
    assert response.status_code == 503, response.get_data(as_text=True)[:500]
    body = response.get_json()
    assert body["error"] == "unavailable" and body["code"] == 503, body
    assert "database" in body["message"].lower()
    return body


def test_a_locked_sqlite_database_is_503_and_healthz_says_so(locked_sqlite, redis_url, workers,
                                                            site):
    path, lock = locked_sqlite
    app = create_app(make_config(f"sqlite:///{path}", redis_url, database_timeout=0.5))
    customer = new_customer(app, credits=10)
    client = app.test_client()
    assert client.get("/healthz").get_json()["database"] == "ok"

    locker = lock()
    _unavailable(customer.post("/scrape", {"url": f"{site}/article"}))
    health = client.get("/healthz")
    assert health.status_code == 503
    assert health.get_json()["database"] == "down" and health.get_json()["redis"] == "ok"
    assert customer.get("/account").status_code == 200  # reads still work under the lock

    locker.communicate(timeout=10)  # its stdin closed: it unlocks and ends
    assert client.get("/healthz").status_code == 200
    assert customer.post("/scrape", {"url": f"{site}/article"}).status_code == 200
    assert customer.balance() == 9
    assert_books_balance(app, customer.account_id)


def test_an_unreachable_postgresql_is_503(redis_url):
    # Nothing listens on port 1: the driver's connection fails (no SQLSTATE).
    app = create_app(make_config("postgresql+psycopg2://user@127.0.0.1:1/none", redis_url,
                                 database_timeout=1))
    client = app.test_client()
    _unavailable(client.get("/api/service/v1/account",
                            headers={"Authorization": "Bearer wdp_whatever"}))
    health = client.get("/healthz")
    assert health.status_code == 503 and health.get_json()["database"] == "down"


def test_a_path_that_is_not_a_database_file_is_503(tmp_path, redis_url):
    app = create_app(make_config(f"sqlite:///{tmp_path}", redis_url))  # a directory
    _unavailable(app.test_client().get("/api/service/v1/account",
                                       headers={"Authorization": "Bearer wdp_whatever"}))


def test_a_missing_table_is_still_a_500(tmp_path, redis_url):
    """Our bugs are not hidden behind 503: an unmigrated database is a fault to fix."""
    app = create_app(make_config(f"sqlite:///{tmp_path / 'empty.db'}", redis_url))
    response = app.test_client().get("/api/service/v1/account",
                                     headers={"Authorization": "Bearer wdp_whatever"})
    assert response.status_code == 500
    assert response.get_json()["error"] == "internal_error"


@pytest.fixture
def read_only_postgres(postgres_url):
    """A fresh migrated PostgreSQL database with one account, then switched to read-only
    (``default_transaction_read_only``, what a standby also answers)."""
    if not postgres_url:
        pytest.skip("TEST_DATABASE_URL is not set")
    import psycopg2

    parts = urlsplit(postgres_url)
    name = f"faults_{uuid.uuid4().hex[:8]}"
    admin = psycopg2.connect(urlunsplit(parts._replace(scheme="postgresql", path="/postgres")))
    admin.autocommit = True
    admin.cursor().execute(f'CREATE DATABASE "{name}"')
    url = urlunsplit(parts._replace(path=f"/{name}"))
    try:
        migrate(url)
        yield url, lambda: admin.cursor().execute(
            f'ALTER DATABASE "{name}" SET default_transaction_read_only = on')
    finally:
        admin.cursor().execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()


def test_a_read_only_postgresql_is_503(read_only_postgres, redis_url, workers, site):
    url, make_read_only = read_only_postgres
    app = create_app(make_config(url, redis_url))
    customer = new_customer(app, credits=10)
    make_read_only()
    app.extensions["webdata.db"].engine.dispose()  # new sessions get the read-only default
    _unavailable(customer.post("/scrape", {"url": f"{site}/article"}))
    health = app.test_client().get("/healthz")
    assert health.status_code == 503 and health.get_json()["database"] == "down"
    assert customer.balance() == 10
    assert_books_balance(app, customer.account_id)
