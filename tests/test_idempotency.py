"""Idempotency-Key (docs/api.md, Idempotency): replays, conflicts, per-account keys, which answers
are kept, expiry, and concurrent duplicates running once on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from flask_smorest import Blueprint
from sqlalchemy import select, update

from api import create_app
from api.auth import authenticated
from api.idempotency import abandoned_after, request_hash
from api.operations import request_lifetime
from storage import collections
from storage import idempotency as records
from storage.models import IdempotencyRecord, utcnow
from tests.conftest import Customer, make_config, new_customer

BASE = "/api/service/v1"


def post(customer: Customer, path: str, body, key: str | None, client=None):
    headers = dict(customer.headers)
    if key is not None:
        headers["Idempotency-Key"] = key
    client = client or customer.client
    if isinstance(body, str):  # raw JSON text, as sent
        return client.post(f"{BASE}{path}", data=body, headers=headers,
                           content_type="application/json")
    return client.post(f"{BASE}{path}", json=body, headers=headers)


def new_key() -> str:
    return f"key-{uuid.uuid4()}"


def record_of(customer: Customer, key: str) -> IdempotencyRecord | None:
    with customer.app.extensions["webdata.db"].session() as session:
        return session.scalar(select(IdempotencyRecord).where(
            IdempotencyRecord.account_id == customer.account_id, IdempotencyRecord.key == key))


def lines(customer: Customer, operation: str = "scrape") -> list[dict]:
    return [row for row in customer.activity() if row["operation"] == operation]


@pytest.fixture
def money_app(database_url, redis_url, workers):
    return create_app(make_config(database_url, redis_url))


@pytest.fixture
def any_customer(money_app) -> Customer:
    """A customer on SQLite, then on PostgreSQL (for the tests that compare times in SQL)."""
    return new_customer(money_app)


def test_same_key_and_body_replays_the_first_answer_and_charges_once(customer, site):
    key = new_key()
    first = post(customer, "/scrape", {"url": f"{site}/article", "include_links": False}, key)
    assert first.status_code == 200, first.get_json()
    assert "Idempotent-Replayed" not in first.headers
    # The same object, keys in another order and other spacing: the same request.
    url = json.dumps(f"{site}/article")
    again = post(customer, "/scrape", '{ "include_links" : false,\n  "url": ' + url + " }", key)
    assert again.status_code == 200
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.get_data() == first.get_data()  # the same body, byte for byte
    assert again.get_json()["request_id"] == first.get_json()["request_id"]
    assert again.headers["X-Request-Id"] != first.headers["X-Request-Id"]  # its own id
    assert again.headers["X-Credits-Used"] == first.headers["X-Credits-Used"] == "1"
    assert again.headers["X-Credits-Remaining"] == first.headers["X-Credits-Remaining"] == "99"
    assert "RateLimit-Remaining" in again.headers
    assert customer.balance() == 99
    history = lines(customer)
    assert len(history) == 1
    assert history[0]["request_id"] == first.get_json()["request_id"]


def test_same_key_with_another_body_or_operation_is_422(customer, site):
    key = new_key()
    assert post(customer, "/scrape", {"url": f"{site}/article"}, key).status_code == 200
    for path, body in (("/scrape", {"url": f"{site}/contact"}),
                       ("/scrape", {"url": f"{site}/article", "include_links": False}),
                       ("/contacts", {"url": f"{site}/article"})):
        response = post(customer, path, body, key)
        assert response.status_code == 422, path
        error = response.get_json()
        assert error["error"] == "idempotency_key_reused"
        assert error["code"] == 422 and error["errors"] == {}
        assert "Idempotent-Replayed" not in response.headers
    assert customer.balance() == 99
    assert record_of(customer, key).state == "done"  # the first answer is still kept


def test_same_key_while_the_first_runs_is_409(customer, site):
    """The slow page holds the first request (until the worker's download timeout, then 504);
    its duplicate, sent while the key is in flight, is 409 and runs nothing."""
    key = new_key()
    body = {"url": f"{site}/drip"}
    first: dict = {}
    runner = threading.Thread(target=lambda: first.update(
        response=post(customer, "/scrape", body, key, client=customer.app.test_client())))
    runner.start()
    deadline = time.monotonic() + 30
    while record_of(customer, key) is None:
        assert time.monotonic() < deadline, "the first request never claimed its key"
        time.sleep(0.05)
    duplicate = post(customer, "/scrape", body, key)
    runner.join(timeout=60)
    assert duplicate.status_code == 409, duplicate.get_json()
    assert duplicate.get_json()["error"] == "conflict"
    assert first["response"].status_code == 504  # a 5xx: the key is free again
    assert record_of(customer, key) is None
    assert [row["status"] for row in lines(customer)] == ["failed", "failed"]  # 409 and 504
    assert customer.balance() == 100


def test_keys_are_per_account(app, site):
    alice, bob = new_customer(app), new_customer(app)
    key = new_key()
    answers = [post(who, "/scrape", {"url": f"{site}/article"}, key) for who in (alice, bob)]
    assert [a.status_code for a in answers] == [200, 200]
    assert all("Idempotent-Replayed" not in a.headers for a in answers)
    assert answers[0].get_json()["request_id"] != answers[1].get_json()["request_id"]
    assert alice.balance() == bob.balance() == 99


def test_a_refused_first_request_is_replayed_as_refused(customer, site):
    """A 4xx is kept: the retry gets the same 403 without running or writing history again."""
    key = new_key()
    body = {"url": "http://127.0.0.1:9/"}
    first = post(customer, "/scrape", body, key)
    assert first.status_code == 403 and first.get_json()["error"] == "source_policy"
    again = post(customer, "/scrape", body, key)
    assert again.status_code == 403
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.get_json() == first.get_json()
    assert len(lines(customer)) == 1
    assert customer.balance() == 100


def test_a_5xx_is_not_kept_and_the_retry_runs(customer, site):
    key = new_key()
    body = {"url": f"{site}/broken"}
    first = post(customer, "/scrape", body, key)
    assert first.status_code == 502, first.get_json()
    assert record_of(customer, key) is None  # released
    again = post(customer, "/scrape", body, key)
    assert again.status_code == 502
    assert "Idempotent-Replayed" not in again.headers
    assert again.get_json()["request_id"] != first.get_json()["request_id"]
    assert len(lines(customer)) == 2
    assert customer.balance() == 100


def test_a_key_that_could_not_be_freed_is_freed_by_the_next_request(customer, site,
                                                                    monkeypatch):
    """After a 5xx the key is free again (docs/api.md), also when the database failed just as it
    was to be freed: the process frees it before it claims any key again, not minutes later
    when it would count as abandoned."""
    key, body = new_key(), {"url": f"{site}/broken"}
    real_release = records.release

    def failing(*args, **kwargs):
        raise RuntimeError("the database failed just then")

    monkeypatch.setattr(records, "release", failing)
    assert post(customer, "/scrape", body, key).status_code == 502
    assert record_of(customer, key) is not None  # still held
    monkeypatch.setattr(records, "release", real_release)
    again = post(customer, "/scrape", body, key)
    assert again.status_code == 502 and "Idempotent-Replayed" not in again.headers
    assert customer.balance() == 100


def test_a_crashing_request_frees_its_key(sqlite_url, redis_url):
    """A bug of ours (an exception, answered 500) must not hold the key: the retry runs."""
    app = create_app(make_config(sqlite_url, redis_url))
    crash = authenticated(Blueprint("crash", __name__, url_prefix=BASE))
    calls: list[dict] = []

    @crash.route("/crash", methods=["POST"])
    def crashing():
        calls.append({})
        raise RuntimeError("a bug")

    app.register_blueprint(crash)
    customer, key = new_customer(app), new_key()
    for _ in range(2):
        response = post(customer, "/crash", {"url": "x"}, key)
        assert response.status_code == 500
        assert response.get_json()["error"] == "internal_error"
    assert len(calls) == 2
    assert record_of(customer, key) is None


def test_records_expire_after_24_hours_and_are_purged(any_customer, site):
    customer = any_customer
    db = customer.app.extensions["webdata.db"]
    key = new_key()
    body = {"url": f"{site}/article"}
    first = post(customer, "/scrape", body, key)
    assert first.status_code == 200
    with db.session() as session:
        session.execute(update(IdempotencyRecord).where(
            IdempotencyRecord.account_id == customer.account_id, IdempotencyRecord.key == key
        ).values(created_at=utcnow() - timedelta(hours=24, minutes=1),
                 expires_at=utcnow() - timedelta(minutes=1)))
    again = post(customer, "/scrape", body, key)  # an expired record is ignored
    assert again.status_code == 200
    assert "Idempotent-Replayed" not in again.headers
    assert again.get_json()["request_id"] != first.get_json()["request_id"]
    assert customer.balance() == 98
    assert record_of(customer, key).request_id == again.get_json()["request_id"]
    # Purging deletes what has expired, and only that.
    old = new_key()
    records.claim(db, customer.account_id, old, "x", "req_old", abandoned_after=timedelta(1),
                  now=utcnow() - timedelta(hours=25))
    assert record_of(customer, old) is not None
    assert records.purge(db) >= 1
    assert record_of(customer, old) is None
    assert record_of(customer, key) is not None


def test_a_key_held_by_a_dead_request_is_free_after_the_deadline(any_customer, site):
    """A request that died holding its key (no answer, no release) blocks it only until it is
    older than any request can run — never before its reservation could be swept, or a retry
    could run and capture while the first request still may."""
    customer = any_customer
    db = customer.app.extensions["webdata.db"]
    with customer.app.app_context():
        assert abandoned_after() > request_lifetime()
        holding = abandoned_after().total_seconds()
    body = {"url": f"{site}/article"}
    with customer.app.test_request_context(f"{BASE}/scrape", method="POST", json=body):
        digest = request_hash()
    alive, dead = new_key(), new_key()
    records.claim(db, customer.account_id, alive, digest, "req_alive",
                  abandoned_after=timedelta(1), now=utcnow() - timedelta(seconds=holding - 30))
    records.claim(db, customer.account_id, dead, digest, "req_dead",
                  abandoned_after=timedelta(1), now=utcnow() - timedelta(seconds=holding + 1))
    assert post(customer, "/scrape", body, alive).status_code == 409
    taken = post(customer, "/scrape", body, dead)
    assert taken.status_code == 200, taken.get_json()
    assert record_of(customer, dead).state == "done"
    assert customer.balance() == 99


def test_a_charged_request_whose_answer_was_not_kept_never_runs_again(any_customer, site,
                                                                     monkeypatch):
    """The first request was charged, then its answer could not be stored (the database
    failed just then): its key stays held. Past the deadline a retry must not take it over
    and run (and charge) again: it is told why, and nothing more is charged."""
    customer = any_customer
    body, key = {"url": f"{site}/article"}, new_key()
    real_complete = records.complete

    def failing(*args, **kwargs):
        raise RuntimeError("the database failed just then")

    monkeypatch.setattr(records, "complete", failing)
    first = post(customer, "/scrape", body, key)
    assert first.status_code == 200 and customer.balance() == 99
    monkeypatch.setattr(records, "complete", real_complete)
    with customer.app.app_context():
        past = abandoned_after() + timedelta(seconds=1)
    with customer.app.extensions["webdata.db"].session() as session:
        session.execute(update(IdempotencyRecord).where(
            IdempotencyRecord.account_id == customer.account_id, IdempotencyRecord.key == key
        ).values(created_at=utcnow() - past))
    for _ in range(2):
        retry = post(customer, "/scrape", body, key)
        assert retry.status_code == 409, retry.get_json()
        assert first.get_json()["request_id"] in retry.get_json()["message"]
    assert customer.balance() == 99
    assert [row["status"] for row in lines(customer) if row["credits"]] == ["succeeded"]
    assert post(customer, "/scrape", body, new_key()).status_code == 200  # a new key runs


def test_a_key_whose_request_started_a_collection_is_never_taken_over(any_customer):
    """Likewise for a collection started under the key (its pages are charged as stored)."""
    customer = any_customer
    db = customer.app.extensions["webdata.db"]
    key, held = new_key(), timedelta(minutes=5)
    records.claim(db, customer.account_id, key, "digest", "req_started",
                  abandoned_after=held, now=utcnow() - 2 * held)
    collections.create(db, account_id=customer.account_id, mode="batch", extract="page",
                       spec={"urls": ["http://a.test/"]}, max_running=5,
                       request_id="req_started")
    again = records.claim(db, customer.account_id, key, "digest", "req_retry",
                          abandoned_after=held)
    assert again == records.TookEffect("req_started")
    other = records.claim(db, customer.account_id, new_key(), "digest", "req_other",
                          abandoned_after=held)
    assert isinstance(other, records.Claimed)


@pytest.mark.parametrize("key", ["", " ", "a" * 256, "tab\there", "caf\xe9", " padded"])
def test_a_malformed_key_is_400_and_runs_nothing(customer, site, key):
    response = post(customer, "/scrape", {"url": f"{site}/article"}, key)
    assert response.status_code == 400, response.get_json()
    error = response.get_json()
    assert error["error"] == "bad_request" and "Idempotency-Key" in error["message"]
    assert customer.balance() == 100
    assert record_of(customer, key) is None


def test_the_longest_key_is_accepted(customer, site):
    key = "k" * 127 + " " + "~" * 127
    assert post(customer, "/scrape", {"url": f"{site}/article"}, key).status_code == 200
    assert post(customer, "/scrape", {"url": f"{site}/article"}, key).headers[
        "Idempotent-Replayed"] == "true"
    assert customer.balance() == 99


def test_every_post_operation_documents_the_key(app):
    spec = app.test_client().get(f"{BASE}/openapi.json").get_json()
    parameter = spec["components"]["parameters"]["IdempotencyKey"]
    assert (parameter["in"], parameter["name"]) == ("header", "Idempotency-Key")
    assert parameter["schema"]["maxLength"] == 255
    posts = [item["post"] for item in spec["paths"].values() if "post" in item]
    assert len(posts) >= 7
    for operation in posts:
        name = operation["operationId"]
        assert {"$ref": "#/components/parameters/IdempotencyKey"} in operation["parameters"]
        responses = operation["responses"]
        assert "still running" in responses["409"]["description"], name
        assert "idempotency_key_reused" in responses["422"]["description"], name
        ok = next(status for status in responses if status.startswith("2"))
        assert "Idempotent-Replayed" in responses[ok]["headers"], name
        assert "Idempotent-Replayed" not in responses["409"].get("headers", {}), name
    for item in spec["paths"].values():
        for method, operation in item.items():
            if method not in ("post", "parameters"):
                assert "Idempotency-Key" not in json.dumps(operation.get("parameters", []))


def test_twenty_concurrent_duplicates_run_once(money_app, site, site_server):
    customer = new_customer(money_app, credits=10)
    key = new_key()
    body = {"url": f"{site}/product"}
    fetched = site_server.requests["/product"]

    def call(_):
        return post(customer, "/scrape", body, key, client=money_app.test_client())

    with ThreadPoolExecutor(max_workers=20) as pool:
        answers = list(pool.map(call, range(20)))
    statuses = [a.status_code for a in answers]
    assert set(statuses) <= {200, 409}, statuses
    ran = [a for a in answers if a.status_code == 200 and "Idempotent-Replayed" not in a.headers]
    assert len(ran) == 1, statuses
    replays = [a for a in answers if a.headers.get("Idempotent-Replayed") == "true"]
    assert all(a.get_data() == ran[0].get_data() for a in replays)
    assert site_server.requests["/product"] == fetched + 1  # one fetch of the page
    assert customer.balance() == 9
    history = lines(customer)
    assert [row["status"] for row in history].count("succeeded") == 1
    assert len(history) == 1 + statuses.count(409)  # each 409 is a free, failed line
    # A retry after the dust settles is a replay.
    assert post(customer, "/scrape", body, key).headers["Idempotent-Replayed"] == "true"
    assert customer.balance() == 9
