"""Fairness between accounts: a plan's ``max_concurrent_requests`` caps the
single-page jobs one account has on the workers, so other accounts are served at once.

A request over the cap is refused at once (429 ``rate_limited``, ``Retry-After: 1``, nothing
charged): it never waits in an API thread, which would hold back every other account's requests.
"""

from __future__ import annotations

import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
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
from storage.models import Account, Activity, Plan
from tests.conftest import account_at_old_revision, make_config, new_customer
from tests.support.books import assert_books
from tests.support.waits import wait_until

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


def _redis(app) -> Redis:
    return app.extensions["webdata.redis"]


# --- through the API, with the workers ---------------------------------------------------------


def _history_row(app, request_id: str) -> tuple[str, int, str | None]:
    """(status, credits, error) of a request's one line of history."""
    with app.extensions["webdata.db"].session() as session:
        [row] = session.scalars(sa.select(Activity).where(Activity.request_id == request_id))
        return row.status, row.credits, row.error


def assert_refused_over_cap(app, answer) -> None:
    """A 429 ``rate_limited`` of the cap: Retry-After 1, the rate limiter's headers, no
    credits, and a line of history saying so with 0 credits."""
    body = answer.get_json()
    assert (answer.status_code, body["error"]) == (429, "rate_limited"), body
    assert "requests in flight" in body["message"], body["message"]
    assert "max_concurrent_requests" in body["message"], body["message"]
    assert answer.headers["Retry-After"] == "1"
    assert answer.headers["RateLimit-Limit"] == "6000"  # the plan's rate, as for any request
    for name in ("RateLimit-Remaining", "RateLimit-Reset"):
        assert int(answer.headers[name]) >= 0, name
    assert "X-Credits-Used" not in answer.headers
    assert _history_row(app, body["request_id"]) == ("failed", 0, "rate_limited")


def test_an_account_at_its_cap_is_refused_at_once_while_another_account_is_served(
        app, site, site_server):
    a = new_customer(app, credits=5, plan=capped_plan(app, 1))
    broke = new_customer(app, credits=0, plan=capped_plan(app, 1))
    b = new_customer(app, credits=5, plan=capped_plan(app, 1))
    refused = f"refused-{uuid.uuid4().hex[:8]}"
    # A's (and the broke account's) one slot is held by another of its requests all along.
    for holder in (a, broke):
        assert inflight.try_acquire(_redis(app), holder.account_id, "req_other", 1,
                                    timedelta(minutes=1))
    try:
        over = a.post("/scrape", {"url": f"{site}/slow/{refused}?ms=10"})
        answer_b = b.post("/scrape", {"url": f"{site}/article"})
        # Credits are reserved before the slot is taken: over its balance, a 402 still.
        poor = broke.post("/scrape", {"url": f"{site}/article"})
        assert inflight.held(_redis(app), a.account_id) == 1  # the holder's slot only
    finally:
        for holder in (a, broke):
            inflight.release(_redis(app), holder.account_id, "req_other")
    assert_refused_over_cap(app, over)
    assert answer_b.status_code == 200, answer_b.get_json()
    assert (poor.status_code, poor.get_json()["error"]) == (402, "insufficient_credits")
    assert site_server.requests[f"/slow/{refused}"] == 0  # no job ran for the refusal
    # Once the slot is free, the same request is served.
    again = a.post("/scrape", {"url": f"{site}/slow/{refused}?ms=10"})
    assert again.status_code == 200, again.get_json()
    assert site_server.requests[f"/slow/{refused}"] == 1
    assert (a.balance(), b.balance(), broke.balance()) == (4, 4, 0)
    for customer in (a, b, broke):
        assert_books(app.extensions["webdata.db"], customer.account_id)
        assert inflight.held(_redis(app), customer.account_id) == 0


def test_a_request_in_flight_holds_the_slot_until_its_answer_is_in(app, site, site_server):
    a = new_customer(app, credits=5, plan=capped_plan(app, 1))
    tag, refused, after = (f"{name}-{uuid.uuid4().hex[:8]}"
                           for name in ("first", "refused", "after"))
    with ThreadPoolExecutor(max_workers=1) as pool:
        first = pool.submit(a.post, "/scrape", {"url": f"{site}/slow/{tag}?ms=2000"},
                            client=app.test_client())
        wait_until(lambda: site_server.open_now[tag] >= 1, "A's first page to be fetched",
                   PATIENCE)
        over = a.post("/scrape", {"url": f"{site}/slow/{refused}?ms=10"})
        answer = first.result(timeout=PATIENCE)
    assert answer.status_code == 200, answer.get_json()
    assert_refused_over_cap(app, over)
    assert site_server.requests[f"/slow/{refused}"] == 0
    assert inflight.held(_redis(app), a.account_id) == 0  # given back with the answer
    assert a.post("/scrape", {"url": f"{site}/slow/{after}?ms=10"}).status_code == 200
    assert site_server.open_peak[tag] == 1
    assert a.balance() == 3
    assert_books(app.extensions["webdata.db"], a.account_id)


def test_a_failed_request_gives_its_slot_back(app, site, site_server):
    a = new_customer(app, credits=5, plan=capped_plan(app, 1))
    failed = a.post("/scrape", {"url": f"{site}/no-such-page"})
    assert (failed.status_code, failed.get_json()["error"]) == (502, "target_http_error")
    assert inflight.held(_redis(app), a.account_id) == 0
    tag = f"after-{uuid.uuid4().hex[:8]}"
    assert a.post("/scrape", {"url": f"{site}/slow/{tag}?ms=10"}).status_code == 200
    assert a.balance() == 4
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
    wait_until(lambda: inflight.try_acquire(redis, account, "req_next", 1, timedelta(minutes=1)),
               "the expired lease to be taken over", PATIENCE)
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


def test_a_full_account_is_refused_at_once_and_served_once_a_slot_is_given_back(redis_url):
    redis = Redis.from_url(redis_url)
    account = f"acct_{uuid.uuid4().hex[:12]}"
    assert inflight.try_acquire(redis, account, "req_first", 1, timedelta(minutes=1))
    with pytest.raises(ApiError) as caught, inflight.slot(
            redis, account, "req_second", 1, lease=timedelta(minutes=1)):
        pytest.fail("entered a full account")
    refusal = caught.value
    assert (refusal.status, refusal.error) == (429, "rate_limited")
    assert refusal.headers == {"Retry-After": "1"}  # RateLimit-*: as on any answer
    assert "1 requests in flight" in refusal.message
    assert redis.zrange(inflight.key(account), 0, -1) == [b"req_first"]  # nothing taken
    inflight.release(redis, account, "req_first")
    with inflight.slot(redis, account, "req_second", 1, lease=timedelta(minutes=1)):
        assert redis.zrange(inflight.key(account), 0, -1) == [b"req_second"]
    assert inflight.held(redis, account) == 0  # and gave it back on leaving


def test_the_slot_is_given_back_when_the_block_raises(redis_url):
    redis = Redis.from_url(redis_url)
    account = f"acct_{uuid.uuid4().hex[:12]}"
    with pytest.raises(ApiError), inflight.slot(redis, account, "req_x", 1,
                                                lease=timedelta(minutes=1)):
        assert inflight.held(redis, account) == 1
        raise ApiError("target_http_error", "404")
    assert inflight.held(redis, account) == 0


def test_redis_trouble_is_a_503():
    redis = Redis.from_url("redis://127.0.0.1:1/0", socket_connect_timeout=0.5)
    with pytest.raises(ApiError) as caught, inflight.slot(
            redis, "acct_x", "req_x", 1, lease=timedelta(seconds=5)):
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
        account_id = account_at_old_revision(session, "before", "standard")
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
