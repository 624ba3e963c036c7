"""Fairness between accounts (issue 10): a plan's ``max_concurrent_requests`` caps the
single-page jobs one account has on the workers, so other accounts are served at once.

The test workers are 2 processes running one job each: an account with a cap of 1 leaves the
other one free for everyone else.
"""

from __future__ import annotations

import threading
import time
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import timedelta

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.config import Config as AlembicConfig
from redis import Redis
from sqlalchemy.exc import IntegrityError

from api import create_app, inflight
from api.errors import ApiError
from storage import accounts
from storage.db import MIGRATIONS, Database, migrate
from storage.models import Account, Plan
from tests.books import assert_books
from tests.conftest import make_config, new_customer

#: Longest bounded wait of these tests, in seconds (never an assertion on time).
PATIENCE = 20


def capped_plan(app, cap: int) -> str:
    """A new plan allowing ``cap`` requests in flight (and a rate no test reaches)."""
    name = f"cap{cap}-{uuid.uuid4().hex[:8]}"
    with app.extensions["webdata.db"].session() as session:
        session.add(Plan(name=name, requests_per_minute=6000, max_batch_urls=10,
                         max_crawl_pages=10, max_running_collections=1,
                         max_concurrent_requests=cap))
    return name


def wait_for(predicate, what: str) -> None:
    deadline = time.monotonic() + PATIENCE
    while not predicate():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.01)


def _redis(app) -> Redis:
    return app.extensions["webdata.redis"]


# --- through the API, with the workers ---------------------------------------------------------


def test_an_account_at_its_cap_waits_its_turn_while_another_account_is_served_at_once(
        app, site, site_server):
    a = new_customer(app, credits=10, plan=capped_plan(app, 1))
    b = new_customer(app, credits=5)
    tag = f"fair-{uuid.uuid4().hex[:8]}"
    slow = f"{site}/slow/{tag}?ms=1500"  # B has 1.5 s to be served, on a busy machine too

    def scrape_a(_):
        return a.post("/scrape", {"url": slow}, client=app.test_client())

    with ThreadPoolExecutor(max_workers=3) as pool:
        futures: list[Future] = [pool.submit(scrape_a, i) for i in range(3)]
        wait_for(lambda: site_server.open_now[tag] >= 1, "A's first page to be fetched")
        answer_b = b.post("/scrape", {"url": f"{site}/article"})
        pending_a = sum(1 for future in futures if not future.done())
        answers_a = [future.result(timeout=PATIENCE) for future in futures]
    assert answer_b.status_code == 200, answer_b.get_json()
    # Without the cap, A's 3 jobs take both workers and B's queues behind the third: it ends
    # after two of them. With it, B takes the free worker while A's second and third wait.
    assert pending_a >= 2, pending_a
    assert [r.status_code for r in answers_a] == [200] * 3, [r.get_json() for r in answers_a]
    assert site_server.open_peak[tag] == 1  # never two of A's pages fetched at once
    assert (a.balance(), b.balance()) == (7, 4)
    for customer in (a, b):
        assert_books(app.extensions["webdata.db"], customer.account_id)
    assert inflight.held(_redis(app), a.account_id) == 0


def test_a_failed_request_gives_its_slot_back(app, site, site_server):
    a = new_customer(app, credits=5, plan=capped_plan(app, 1))
    failed = a.post("/scrape", {"url": f"{site}/no-such-page"})
    assert (failed.status_code, failed.get_json()["error"]) == (502, "target_http_error")
    assert inflight.held(_redis(app), a.account_id) == 0
    tag = f"after-{uuid.uuid4().hex[:8]}"
    assert a.post("/scrape", {"url": f"{site}/slow/{tag}?ms=10"}).status_code == 200
    assert a.balance() == 4
    assert_books(app.extensions["webdata.db"], a.account_id)


def test_a_request_that_never_gets_a_slot_is_a_504_and_charged_nothing(sqlite_url, redis_url,
                                                                       site):
    # No worker is needed: the request waits for its slot before any job is enqueued.
    app = create_app(make_config(sqlite_url, redis_url, job_wait_seconds=1))
    a = new_customer(app, credits=3, plan=capped_plan(app, 1))
    assert inflight.try_acquire(_redis(app), a.account_id, "req_other", 1, timedelta(minutes=1))
    try:
        answer = a.post("/scrape", {"url": f"{site}/article"})
    finally:
        inflight.release(_redis(app), a.account_id, "req_other")
    body = answer.get_json()
    assert (answer.status_code, body["error"]) == (504, "timeout"), body
    assert "nothing was charged" in body["message"]
    assert a.balance() == 3
    assert inflight.held(_redis(app), a.account_id) == 0
    [row] = [r for r in a.activity() if r["operation"] == "scrape"]
    assert (row["status"], row["credits"]) == ("failed", 0)
    assert_books(app.extensions["webdata.db"], a.account_id)


def test_the_account_shows_its_cap(sqlite_url):
    app = create_app(make_config(sqlite_url, "redis://127.0.0.1:1/0"))
    capped = new_customer(app, credits=0, plan=capped_plan(app, 3))
    free = new_customer(app, credits=0)
    assert capped.get("/account").get_json()["plan"]["max_concurrent_requests"] == 3
    assert free.get("/account").get_json()["plan"]["max_concurrent_requests"] == 4
    with app.extensions["webdata.db"].session() as session:
        name = session.get(Account, capped.account_id).name
    shown = app.test_cli_runner().invoke(args=["accounts", "show", name])
    assert shown.exit_code == 0, shown.output
    assert "3 in flight at once" in shown.output


# --- the gate itself, on the real Redis ---------------------------------------------------------


def test_a_slot_held_past_its_lease_is_taken_over(redis_url):
    redis = Redis.from_url(redis_url)
    account = f"acct_{uuid.uuid4().hex[:12]}"
    assert inflight.try_acquire(redis, account, "req_killed", 1, timedelta(milliseconds=200))
    assert not inflight.try_acquire(redis, account, "req_next", 1, timedelta(minutes=1))
    # The same request asking again holds its slot still; it takes no second one.
    assert inflight.try_acquire(redis, account, "req_killed", 1, timedelta(milliseconds=200))
    assert inflight.held(redis, account) == 1
    wait_for(lambda: inflight.try_acquire(redis, account, "req_next", 1, timedelta(minutes=1)),
             "the expired lease to be taken over")
    assert redis.zrange(inflight.key(account), 0, -1) == [b"req_next"]
    assert 0 < redis.pttl(inflight.key(account)) <= 60_000  # no key outlives its leases
    inflight.release(redis, account, "req_next")
    assert not redis.exists(inflight.key(account))


def test_the_cap_holds_under_concurrent_takers(redis_url):
    redis = Redis.from_url(redis_url)
    account = f"acct_{uuid.uuid4().hex[:12]}"
    start = threading.Barrier(20)

    def take(i: int) -> bool:
        start.wait()
        return inflight.try_acquire(redis, account, f"req_{i}", 3, timedelta(minutes=1))

    with ThreadPoolExecutor(max_workers=20) as pool:
        taken = list(pool.map(take, range(20)))
    assert taken.count(True) == 3
    assert inflight.held(redis, account) == 3
    redis.delete(inflight.key(account))


def test_a_waiting_request_gets_the_slot_when_it_is_given_back(redis_url):
    redis = Redis.from_url(redis_url)
    account = f"acct_{uuid.uuid4().hex[:12]}"
    assert inflight.try_acquire(redis, account, "req_first", 1, timedelta(minutes=1))
    entered = threading.Event()

    def second() -> None:
        with inflight.slot(redis, account, "req_second", 1, lease=timedelta(minutes=1),
                           deadline=time.monotonic() + PATIENCE):
            entered.set()

    waiter = threading.Thread(target=second)
    waiter.start()
    assert not entered.wait(0.3)  # still full: it waits
    inflight.release(redis, account, "req_first")
    assert entered.wait(PATIENCE)
    waiter.join(PATIENCE)
    assert inflight.held(redis, account) == 0  # and gave it back on leaving


def test_the_slot_is_given_back_when_the_block_raises(redis_url):
    redis = Redis.from_url(redis_url)
    account = f"acct_{uuid.uuid4().hex[:12]}"
    with pytest.raises(ApiError), inflight.slot(redis, account, "req_x", 1,
                                                lease=timedelta(minutes=1),
                                                deadline=time.monotonic() + 1):
        assert inflight.held(redis, account) == 1
        raise ApiError("target_http_error", "404")
    assert inflight.held(redis, account) == 0


def test_redis_trouble_is_a_503():
    redis = Redis.from_url("redis://127.0.0.1:1/0", socket_connect_timeout=0.5)
    with pytest.raises(ApiError) as caught, inflight.slot(
            redis, "acct_x", "req_x", 1, lease=timedelta(seconds=5),
            deadline=time.monotonic() + 1):
        pytest.fail("entered without Redis")
    assert (caught.value.status, caught.value.error) == (503, "unavailable")


# --- the migration -------------------------------------------------------------------------------


def _alembic(url: str) -> AlembicConfig:
    config = AlembicConfig()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("sqlalchemy.url", url)
    return config


def _caps(db: Database) -> dict[str, int]:
    with db.session() as session:
        rows = session.execute(sa.text("SELECT name, max_concurrent_requests FROM plans"))
        return {name: cap for name, cap in rows}


def test_the_migration_gives_each_plan_its_cap_and_goes_back(tmp_path):
    url = f"sqlite:///{tmp_path / 'plans.db'}"
    migrate(url, "0003")
    db = Database(url)
    with db.session() as session:
        account_id = accounts.create_account(session, "before", "standard").id
        session.execute(sa.text(
            "INSERT INTO plans (name, requests_per_minute, max_batch_urls, max_crawl_pages, "
            "max_running_collections) VALUES ('custom', 10, 1, 1, 1)"))
    migrate(url)
    assert _caps(db) == {"free": 4, "standard": 16, "enterprise": 48, "custom": 4}
    with db.session() as session:
        key = accounts.create_key(session, session.get(Account, account_id))
    with db.session() as session:
        principal = accounts.authenticate(session, key)
    assert (principal.plan, principal.max_concurrent_requests) == ("standard", 16)
    with pytest.raises(IntegrityError), db.session() as session:  # at least 1
        session.execute(sa.text("UPDATE plans SET max_concurrent_requests = 0 "
                                "WHERE name = 'custom'"))
    db.dispose()

    command.downgrade(_alembic(url), "0003")
    db = Database(url)
    with db.session() as session:
        columns = [row[1] for row in session.execute(sa.text("PRAGMA table_info(plans)"))]
        assert "max_concurrent_requests" not in columns
        assert session.execute(sa.text("SELECT plan_id FROM accounts")).scalar() is not None
    db.dispose()
    migrate(url)
    assert _caps(Database(url))["enterprise"] == 48
