"""Credits are never lost to a fault: each fault case reproduced with real processes, and
every test ends with the books checked (:func:`tests.support.books.assert_books`).

- text the database cannot store (a lone surrogate, NUL) is a 422 before anything is reserved,
  on SQLite and PostgreSQL;
- a settle that fails on a locked SQLite file is retried, and when every attempt fails the
  reservation is left to the sweeper, which releases it after its deadline, once;
- under ``make run``, a gunicorn worker killed (``kill -9``) while its requests wait leaves
  reservations that the sweeper (RQ's cron scheduler, ``worker.cron``) releases by itself.
"""

from __future__ import annotations

import logging
import signal
import subprocess
import sys
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path

import pytest
import requests
from flask import g
from marshmallow import fields
from sqlalchemy import select, text

from api import create_app
from api.errors import ApiError
from api.operations import run_billed
from api.schemas.fields import storable_text
from storage import accounts, ledger
from storage.db import Database, migrate
from storage.models import Activity, utcnow
from tests.conftest import account_at_old_revision, make_config, new_customer
from tests.support.books import assert_books, open_reservations
from tests.support.waits import wait_until
from tests.test_serve import PATIENCE, Run

#: Every POST operation and the string fields of its body.
STRING_FIELDS = [
    ("/scrape", "url", "http://example.com/{}"),
    ("/contacts", "url", "http://example.com/{}"),
    ("/products", "url", "http://example.com/{}"),
    ("/video-platform", "url", "https://www.youtube.com/watch?v=abc{}"),
    ("/search", "query", "tides{}"),
    ("/search/news", "country", "u{}"),
    ("/search/videos", "language", "e{}"),
]
#: JSON escapes of what no database column can hold.
UNSTORABLE = [r"\ud800", r"\udfff", r"\u0000"]


@pytest.fixture
def plain_app(database_url, redis_url):
    """The API on SQLite or PostgreSQL; no worker is needed to refuse a body."""
    return create_app(make_config(database_url, redis_url))


@pytest.mark.parametrize("escape", UNSTORABLE)
def test_unstorable_text_in_any_field_is_a_422_before_anything_is_reserved(plain_app, escape):
    customer = new_customer(plain_app, credits=10)
    for path, name, template in STRING_FIELDS:
        body = {"url": "http://example.com/", "query": "tides"} if path.startswith("/search") \
            else {}
        fields = {**body, name: template.format("@")}
        raw = ", ".join(f'"{key}": "{value}"' for key, value in fields.items())
        raw = "{" + raw.replace("@", escape) + "}"
        answer = customer.client.post(f"/api/service/v1{path}", data=raw,
                                      content_type="application/json",
                                      headers=customer.headers)
        assert answer.status_code == 422, (path, answer.get_data(as_text=True))
        error = answer.get_json()
        assert error["error"] == "validation_error"
        assert "cannot be stored" in " ".join(error["errors"][name]), error
    db = plain_app.extensions["webdata.db"]
    assert customer.balance() == 10
    assert_books(db, customer.account_id)
    refused = [row for row in customer.activity() if row["operation"] != "credit_grant"]
    assert len(refused) == len(STRING_FIELDS)  # each refusal is in the history, free
    assert all(row["credits"] == 0 and row["status"] == "failed" for row in refused)



def string_fields(schema, prefix: str = ""):
    """(name, field) of every string field of ``schema``, inside lists and nested schemas too."""
    def walk(name, field):
        if isinstance(field, fields.String):
            yield name, field
        if isinstance(field, fields.Nested):
            yield from string_fields(field.schema, f"{name}.")
        for inner in (getattr(field, "inner", None), getattr(field, "value_field", None)):
            if inner is not None:
                yield from walk(f"{name}[]", inner)

    for name, field in schema.fields.items():
        yield from walk(prefix + name, field)


def test_every_string_field_of_every_request_schema_refuses_unstorable_text(plain_app):
    """Whatever schema an operation takes (bodies, query strings), now or added later."""
    checked = []
    for endpoint, view in plain_app.view_functions.items():
        for argument in getattr(view, "_apidoc", {}).get("arguments", {}).get("parameters", []):
            schema = argument["schema"]
            schema = schema() if isinstance(schema, type) else schema
            for name, field in string_fields(schema):
                assert storable_text in field.validators, f"{endpoint}: {name}"
                checked.append(f"{endpoint}: {name}")
    assert "search.search: query" in checked and "extraction.scrape: url" in checked, checked


# --- a settle that fails: retried, else swept ------------------------------------------------

#: Another process holding SQLite's write lock until its stdin closes.
LOCKER = """
import sqlite3, sys
connection = sqlite3.connect(sys.argv[1], isolation_level=None)
connection.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
sys.stdin.read()
connection.rollback()
"""


@pytest.fixture
def locked_app(tmp_path, redis_url, workers):
    """The API on a SQLite file of its own whose writes give up after half a second of lock."""
    url = f"sqlite:///{tmp_path / 'locked.db'}"
    migrate(url)
    return create_app(make_config(url, redis_url, database_timeout=0.5))


def lock(url: str) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", LOCKER, url.removeprefix("sqlite:///")],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline() == "locked\n"
    return proc


def unlock(proc: subprocess.Popen) -> None:
    proc.communicate(timeout=PATIENCE)  # its stdin closed: it unlocks and ends
    assert proc.returncode == 0


def slow_request(customer, site: str) -> tuple[threading.Thread, dict]:
    """A request for the test site's page that drips (it fails after the workers' download
    timeout), started in a thread once its credit is reserved."""
    answer: dict = {}
    thread = threading.Thread(target=lambda: answer.update(
        response=customer.post("/scrape", {"url": f"{site}/drip"})))
    thread.start()
    wait_until(lambda: customer.balance() == 9, "the reservation", PATIENCE)
    return thread, answer


def test_a_settle_that_fails_on_a_locked_database_is_retried(locked_app, site, caplog):
    caplog.set_level(logging.WARNING, logger="api.operations")
    customer = new_customer(locked_app, credits=10)
    db = locked_app.extensions["webdata.db"]
    thread, answer = slow_request(customer, site)
    locker = lock(db.url)
    try:  # held until the settle has failed once
        wait_until(lambda: any("retrying" in r.getMessage() for r in caplog.records),
                   "a failed settle", PATIENCE)
    finally:
        unlock(locker)
    thread.join(PATIENCE)
    response = answer["response"]
    assert response.status_code in (502, 504), response.get_data(as_text=True)
    assert response.get_json()["error"] != "unavailable"  # settled by a retry
    assert_books(db, customer.account_id)  # without any sweep
    assert customer.balance() == 10


def test_a_settle_that_keeps_failing_is_released_by_the_sweep_once(locked_app, site):
    customer = new_customer(locked_app, credits=10)
    db = locked_app.extensions["webdata.db"]
    thread, answer = slow_request(customer, site)
    locker = lock(db.url)
    try:  # held until the request has given up
        thread.join(PATIENCE)
    finally:
        unlock(locker)
    response = answer["response"]
    assert response.status_code == 503, response.get_data(as_text=True)
    assert response.get_json()["error"] == "unavailable"
    [key] = open_reservations(db, customer.account_id)  # the credit is still held

    assert ledger.release_expired(db) == 0  # not before the request's deadline
    later = utcnow() + timedelta(seconds=PATIENCE * 5)
    assert ledger.release_expired(db, later) == 1
    assert ledger.release_expired(db, later) == 0  # a second sweep changes nothing
    assert_books(db, customer.account_id)
    assert customer.balance() == 10
    [row] = [r for r in customer.activity() if r["operation"] == "scrape"]
    assert (row["status"], row["credits"], row["request_id"]) == (
        "failed", 0, response.get_json()["request_id"])
    assert key == f"request:{row['request_id']}"



def test_concurrent_sweeps_release_each_abandoned_reservation_once(database_url):
    """On SQLite and PostgreSQL: two sweepers at once (two schedulers, a slow run overlapping
    the next) release each charge once; a reservation before its deadline is left alone."""
    db = Database(database_url)
    customer = new_customer(create_app(make_config(database_url, "redis://127.0.0.1:1/0")),
                            credits=10)
    past, future = utcnow() - timedelta(seconds=1), utcnow() + timedelta(hours=1)
    for number in range(4):
        ledger.reserve(db, ledger.Charge(customer.account_id, f"sweep:{uuid.uuid4().hex}", 1,
                                         "scrape", request_id=f"req_{number}",
                                         expires_at=past if number < 3 else future))
    with ThreadPoolExecutor(4) as pool:
        released = list(pool.map(lambda _: ledger.release_expired(db), range(4)))
    assert sum(released) == 3, released
    assert ledger.balance_of(db, customer.account_id) == 9  # the live one is still held
    assert len(open_reservations(db, customer.account_id)) == 1
    assert ledger.release_expired(db, future + timedelta(seconds=1)) == 1
    assert_books(db, customer.account_id)
    assert ledger.balance_of(db, customer.account_id) == 10



def test_a_release_racing_another_close_is_settled_already(database_url):
    """A request's release and the sweeper close one charge at the same instant: on
    PostgreSQL both see it open, the second insert of its close hits the unique key. That is
    "settled already" (balance unchanged, no error), not a 500 for the client."""
    db = Database(database_url)
    customer = new_customer(create_app(make_config(database_url, "redis://127.0.0.1:1/0")),
                            credits=10)
    charge = ledger.Charge(customer.account_id, f"race:{uuid.uuid4().hex}", 1, "scrape",
                           request_id="req_race", expires_at=utcnow() - timedelta(seconds=1))
    ledger.reserve(db, charge)
    outcome: list[object] = []

    def release() -> None:
        try:
            outcome.append(ledger.release(db, charge, "fetch_failed"))
        except Exception as exc:  # what the client would have got as a 500
            outcome.append(exc)

    racer = threading.Thread(target=release)
    with db.write() as session:  # the sweeper, its close written but not yet committed
        ledger.close_released(session, charge, ledger.ABANDONED)
        racer.start()
        if database_url.startswith("postgresql"):  # hold on until the racer waits on our row
            wait_until(lambda: db.engine.connect().execute(text(
                "SELECT count(*) FROM pg_locks WHERE NOT granted")).scalar() > 0,
                "the racing release to wait on the unique key", PATIENCE)
    racer.join(timeout=30)
    assert outcome == [10], outcome
    assert_books(db, customer.account_id)


def test_a_request_swept_before_its_capture_is_not_charged(sqlite_url):
    """The sweeper releases a reservation whose request is still running (here its deadline is
    already past): the request's capture then finds the charge closed, answers 503 and charges
    nothing; one line of history, the sweeper's."""
    app = create_app(make_config(sqlite_url, "redis://127.0.0.1:1/0",
                                 reservation_grace=-3600.0))
    customer = new_customer(app, credits=10)
    db = app.extensions["webdata.db"]
    with app.test_request_context(), db.session() as session:
        g.request_id = f"req_{uuid.uuid4().hex[:24]}"
        g.principal = accounts.authenticate(session, customer.key)

        def work() -> dict:
            assert ledger.balance_of(db, customer.account_id) == 9
            assert ledger.release_expired(db) == 1  # the sweeper, while the work runs
            return {"title": "done"}

        with pytest.raises(ApiError) as caught:
            run_billed("scrape", 1, work, url="http://example.com/")
    assert caught.value.error == "unavailable"
    assert_books(db, customer.account_id)
    assert customer.balance() == 10
    [row] = [r for r in customer.activity() if r["operation"] == "scrape"]
    assert (row["status"], row["credits"]) == ("failed", 0)



def test_reservations_stuck_before_the_migration_are_released_by_the_first_sweeps(tmp_path):
    """Credits left stuck by older versions (reservations made before revision 0002, which have
    no deadline) get one an hour after they were made, and the sweep gives them back."""
    url = f"sqlite:///{tmp_path / 'legacy.db'}"
    migrate(url, "0001")
    db = Database(url)
    with db.session() as session:
        account_id = account_at_old_revision(session, "legacy", "free")
    made = (utcnow() - timedelta(hours=2)).strftime("%Y-%m-%d %H:%M:%S.%f")
    with db.write() as session:  # as the code before 0002 left them: 10 granted, 1 held
        session.execute(text("UPDATE accounts SET balance = 9 WHERE id = :id"),
                        {"id": account_id})
        session.execute(text(
            "INSERT INTO ledger_entries (account_id, charge_key, phase, kind, amount, "
            "created_at) VALUES (:id, 'grant:legacy', 'open', 'grant', 10, :at), "
            "(:id, 'request:req_legacy', 'open', 'reserve', -1, :at)"),
            {"id": account_id, "at": made})
        session.execute(text(
            "INSERT INTO activity (account_id, at, operation, credits, status) "
            "VALUES (:id, :at, 'credit_grant', -10, 'succeeded')"), {"id": account_id, "at": made})
    migrate(url)
    assert open_reservations(db, account_id) == ["request:req_legacy"]
    assert ledger.release_expired(db) == 1
    assert_books(db, account_id)
    assert ledger.balance_of(db, account_id) == 10
    with db.session() as session:
        row = session.execute(select(Activity.request_id, Activity.status, Activity.error)
                              .where(Activity.credits == 0)).one()
    assert tuple(row) == ("req_legacy", "failed", ledger.ABANDONED)


# --- a killed API process: the sweeper under make run -----------------------------------------

#: ``make run`` with a short deadline (4 s wait, 0 s grace) and a sweep every second; the drip
#: page keeps a job busy 3 s (the workers' download timeout).
SWEEPING_RUN = {"JOB_WAIT_SECONDS": "4", "RESERVATION_GRACE": "0", "SWEEP_INTERVAL": "1",
                "DATABASE_TIMEOUT": "0.2", "SEARCH_TIMEOUT": "1",
                "CRAWLER_DOWNLOAD_TIMEOUT": "3"}


def test_requests_of_a_killed_api_worker_are_released_by_the_sweeper_of_make_run(
        tmp_path: Path, site):
    serve = Run(tmp_path, tmp_path / "serve.log", env=SWEEPING_RUN)
    try:
        children = serve.started(6)
        assert any("--cron" in p.cmdline() for p in children)  # its first worker runs the cron
        db = Database(f"sqlite:///{tmp_path / 'webdata.db'}")
        with db.session() as session:
            account = accounts.create_account(session, "killed", "free")
            key = accounts.create_key(session, account)
            account_id = account.id
        ledger.grant(db, account_id, 10, "grant:killed")

        answers: list = []

        def scrape() -> None:
            try:
                answers.append(requests.post(
                    f"{serve.base}/api/service/v1/scrape", json={"url": f"{site}/drip"},
                    headers={"Authorization": f"Bearer {key}"}, timeout=PATIENCE))
            except requests.RequestException as exc:
                answers.append(exc)

        threads = [threading.Thread(target=scrape) for _ in range(2)]
        for thread in threads:
            thread.start()
        wait_until(lambda: ledger.balance_of(db, account_id) == 8, "two reservations", PATIENCE)
        [master] = [p for p in children if "gunicorn" in p.cmdline()
                    and p.ppid() == serve.proc.pid]
        for worker in master.children():  # the process serving both requests, mid-wait
            worker.send_signal(signal.SIGKILL)
        for thread in threads:
            thread.join(PATIENCE)
        assert all(isinstance(answer, requests.ConnectionError) for answer in answers), answers
        assert len(open_reservations(db, account_id)) == 2  # nobody left to settle them

        # The cron scheduler enqueues a sweep every second; one runs past the deadline.
        wait_until(lambda: not open_reservations(db, account_id), "the sweeper", PATIENCE,
                   proc=serve.proc)
        assert_books(db, account_id)
        assert ledger.balance_of(db, account_id) == 10
        with db.session() as session:
            rows = session.execute(select(Activity.status, Activity.credits, Activity.error)
                                   .where(Activity.operation == "scrape")).all()
        assert [tuple(row) for row in rows] == [("failed", 0, ledger.ABANDONED)] * 2
        # Sweeping again (the scheduler's next runs, or by hand) changes nothing.
        assert ledger.release_expired(db, utcnow() + timedelta(days=1)) == 0
        assert_books(db, account_id)
        assert ledger.balance_of(db, account_id) == 10
        serve.ctrl_c()
        assert serve.proc.wait(timeout=PATIENCE) == 0, serve.output()
    finally:
        serve.kill()
