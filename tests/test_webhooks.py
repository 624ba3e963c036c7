"""Webhooks, on SQLite and PostgreSQL, sent to a real receiver on loopback: one event per
finished collection, signed the Standard Webhooks way (checked with the ``standardwebhooks``
library a receiver would use), retried on the backoff schedule until a 2xx or the last attempt,
never sent twice for one attempt, never to an address the source policy refuses, never
following a redirect."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from sqlalchemy import func, select
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from api import create_app
from storage import collections, webhooks
from storage.models import CollectionStatus, WebhookEvent, utcnow
from tests.conftest import Customer, make_config, new_customer
from tests.support.webhook_receiver import start_receiver
from worker.webhooks import deliver

RETENTION = timedelta(days=7)


@pytest.fixture
def app(database_url, redis_url):
    return create_app(make_config(database_url, redis_url))


@pytest.fixture
def who(app) -> Customer:
    return new_customer(app, credits=10, plan="standard")


def secret_of(who: Customer) -> str:
    answer = who.post("/account/webhook-secret", None)
    assert answer.status_code == 200, answer.get_json()
    secret = answer.get_json()["secret"]
    assert secret.startswith("whsec_")
    return secret


def finished(who: Customer, webhook_url: str | None,
             status: CollectionStatus = CollectionStatus.COMPLETED) -> str:
    """A collection of ``who`` that asked for ``webhook_url``, made final with ``status``."""
    db = who.app.extensions["webdata.db"]
    row = collections.create(db, account_id=who.account_id, mode="batch", extract="page",
                             spec={"urls": ["http://a.test/"]}, max_running=5,
                             webhook_url=webhook_url)
    assert collections.finish(db, row.id, status, retention=RETENTION, stop_reason=None)
    return row.id


def send(who: Customer, collection_id: str, **options) -> str | None:
    return deliver(webhooks.event_id(collection_id), who.app.config["WEBDATA"], **options)


def event(who: Customer, collection_id: str) -> WebhookEvent:
    with who.app.extensions["webdata.db"].session() as session:
        return session.scalar(select(WebhookEvent)
                              .where(WebhookEvent.collection_id == collection_id))


def test_an_event_is_signed_the_standard_webhooks_way(who, receiver):
    secret = secret_of(who)
    collection_id = finished(who, receiver.url)
    assert send(who, collection_id) == "delivered"
    [request] = receiver.received
    assert request.path == "/hooks"
    headers = {name.lower(): value for name, value in request.headers.items()}
    payload = Webhook(secret).verify(request.body, headers)  # raises unless signed with it
    assert headers["webhook-id"] == payload["id"] == webhooks.event_id(collection_id)
    assert payload["event"] == "collection.completed"
    shown = who.get(f"/collections/{collection_id}").get_json()
    assert payload["collection"] == {key: value for key, value in shown.items()
                                     if key != "webhook"}
    assert payload["created_at"] == shown["finished_at"]
    assert shown["webhook"] == {"status": "delivered", "attempts": 1, "last_status": 204}
    with pytest.raises(WebhookVerificationError):  # another account's secret does not verify
        Webhook(webhooks.new_secret()).verify(request.body, headers)
    assert send(who, collection_id) is None and len(receiver.received) == 1  # done: not again


@pytest.mark.parametrize("status, name", [(CollectionStatus.CANCELLED, "collection.cancelled"),
                                          (CollectionStatus.FAILED, "collection.failed")])
def test_each_final_status_has_its_event(who, receiver, status, name):
    collection_id = finished(who, receiver.url, status)
    assert send(who, collection_id) == "delivered"
    assert json.loads(receiver.received[0].body)["event"] == name


def test_exactly_one_event_per_collection_and_none_unasked(who, receiver):
    db = who.app.extensions["webdata.db"]
    collection_id = finished(who, receiver.url)
    assert not collections.finish(db, collection_id, CollectionStatus.FAILED,
                                  retention=RETENTION)  # a racing finish loses, adds nothing
    with pytest.raises(collections.NotCancellable):
        collections.cancel(db, collection_id, who.account_id, retention=RETENTION)
    silent = finished(who, None)
    with db.session() as session:
        count = session.scalar(select(func.count()).select_from(WebhookEvent)
                               .where(WebhookEvent.account_id == who.account_id))
    assert count == 1 and event(who, silent) is None
    assert who.get(f"/collections/{silent}").get_json()["webhook"] is None
    running = collections.create(db, account_id=who.account_id, mode="batch", extract="page",
                                 spec={"urls": ["http://a.test/"]}, max_running=5,
                                 webhook_url=receiver.url).id
    assert who.get(f"/collections/{running}").get_json()["webhook"] == {
        "status": "pending", "attempts": 0, "last_status": None}


def test_failed_attempts_back_off_for_hours_then_stop(who, receiver):
    receiver.statuses = [500]
    collection_id = finished(who, receiver.url)
    now, made = utcnow(), []
    assert webhooks.ATTEMPTS >= 6 and sum(webhooks.BACKOFF) >= 3600
    for attempt in range(1, webhooks.ATTEMPTS + 1):
        outcome = send(who, collection_id, now=now)
        made.append(now)
        row = event(who, collection_id)
        assert (row.attempts, row.last_status) == (attempt, 500)
        if attempt < webhooks.ATTEMPTS:
            assert outcome == "pending"
            assert send(who, collection_id, now=now) is None  # not due yet: nothing sent
            now += timedelta(seconds=webhooks.BACKOFF[attempt - 1])
    assert outcome == "failed" and len(receiver.received) == webhooks.ATTEMPTS
    assert made[-1] - made[0] >= timedelta(hours=1)
    assert send(who, collection_id, now=now + timedelta(days=1)) is None
    assert who.get(f"/collections/{collection_id}").get_json()["webhook"] == {
        "status": "failed", "attempts": webhooks.ATTEMPTS, "last_status": 500}


def test_a_2xx_after_failures_delivers(who, receiver):
    receiver.statuses = [503, 200]
    collection_id = finished(who, receiver.url)
    assert send(who, collection_id) == "pending"
    later = utcnow() + timedelta(seconds=webhooks.BACKOFF[0])
    assert send(who, collection_id, now=later) == "delivered"
    first, second = receiver.received
    assert first.body == second.body  # the same event, byte for byte
    assert first.headers["webhook-id"] == second.headers["webhook-id"]


def test_two_senders_never_make_one_attempt_twice(who, receiver):
    db = who.app.extensions["webdata.db"]
    collection_id = finished(who, receiver.url)
    event_id = webhooks.event_id(collection_id)
    assert webhooks.due(db) and event_id in webhooks.due(db)
    held = webhooks.claim(db, event_id)
    assert held is not None and webhooks.claim(db, event_id) is None
    assert event_id not in webhooks.due(db)
    assert send(who, collection_id) is None and not receiver.received
    # A sender killed while holding it: another takes it once the claim lapses.
    lapsed = utcnow() + webhooks.CLAIM + timedelta(seconds=1)
    assert send(who, collection_id, now=lapsed) == "delivered"


def test_a_rotated_secret_keeps_signing_for_a_day(who, receiver):
    old, new = secret_of(who), secret_of(who)
    assert old != new
    rotations = [a for a in who.activity() if a["operation"] == "webhook_secret"]
    assert len(rotations) == 2 and {a["credits"] for a in rotations} == {0}
    collection_id = finished(who, receiver.url)
    assert send(who, collection_id) == "delivered"
    request = receiver.received[0]
    assert len(request.headers["webhook-signature"].split(" ")) == 2
    for secret in (old, new):
        Webhook(secret).verify(request.body, request.headers)
    with who.app.extensions["webdata.db"].session() as session:
        from storage.models import Account
        account = session.get(Account, who.account_id)
    assert webhooks.signing_secrets(account, utcnow()) == (new, old)
    assert webhooks.signing_secrets(account, utcnow() + timedelta(hours=25)) == (new,)


def test_no_redirect_is_followed_and_no_body_is_read(who, receiver):
    receiver.statuses = [302]
    collection_id = finished(who, receiver.url)
    assert send(who, collection_id) == "pending"
    assert [r.path for r in receiver.received] == ["/hooks"]  # not /elsewhere
    assert event(who, collection_id).last_status == 302


def test_an_address_the_policy_refuses_is_never_connected_to(database_url, redis_url,
                                                             receiver):
    strict = create_app(make_config(database_url, redis_url, allowed_networks=""))
    who = new_customer(strict, credits=5, plan="standard")
    collection_id = finished(who, receiver.url)  # stored before: the policy changed since
    assert send(who, collection_id) == "pending"
    assert not receiver.received
    row = event(who, collection_id)
    assert row.last_status is None and "not a public address" in row.last_error
    refused = who.post("/collections", {"mode": "batch", "urls": ["https://example.com/"],
                                        "webhook_url": receiver.url})
    assert refused.status_code == 422
    assert "webhook_url" in refused.get_json()["errors"]


@pytest.mark.parametrize(("slowness", "seconds"), [
    ("delay", 2.0),  # answers after 2 s
    # answers at once, a byte every 0.2 s (6 s in all): the timeout is the attempt's, not
    # each read's, so it holds neither the attempt nor a worker slot for its whole length
    ("drip", 0.2),
])
def test_a_slow_receiver_costs_one_timeout(database_url, redis_url, receiver, slowness,
                                           seconds):
    app = create_app(make_config(database_url, redis_url, webhook_timeout=0.5))
    who = new_customer(app, credits=5, plan="standard")
    setattr(receiver, slowness, seconds)
    collection_id = finished(who, receiver.url)
    assert send(who, collection_id) == "pending"
    row = event(who, collection_id)
    assert row.last_status is None and "timed out" in row.last_error


def test_a_name_that_resolves_slowly_costs_one_timeout(database_url, redis_url, receiver,
                                                       monkeypatch):
    """The system resolver takes no timeout: the attempt's deadline covers it too."""
    import socket
    import threading

    import worker.webhook_http

    app = create_app(make_config(database_url, redis_url, webhook_timeout=0.5))
    who = new_customer(app, credits=5, plan="standard")
    collection_id = finished(who, receiver.url)
    release = threading.Event()
    real = socket.getaddrinfo

    port = int(receiver.url.rsplit(":", 1)[1].split("/")[0])

    def stuck(host, at, *args, **kwargs):
        if at == port:  # the receiver's name: a resolver that does not answer (for now)
            release.wait(10)
        return real(host, at, *args, **kwargs)

    monkeypatch.setattr(worker.webhook_http.socket, "getaddrinfo", stuck)
    other = start_receiver()
    try:
        for _ in range(3):  # its events keep timing out, on one lookup between them
            assert send(who, finished(who, receiver.url)) == "pending"
        assert len(worker.webhook_http._LOOKUPS) == 1
        assert send(who, collection_id) == "pending"
        # another receiver's events do not wait behind that name
        assert send(who, finished(who, other.url)) == "delivered"
    finally:
        release.set()
        other.close()
    row = event(who, collection_id)
    assert row.last_status is None and "timed out resolving" in row.last_error
    assert not receiver.received and len(other.received) == 1


def test_a_url_with_letters_beyond_ascii_is_delivered_percent_encoded(who, receiver):
    """``/hé?x=ü`` went to http.client as is: it raised outside the attempt's handling, the
    event stayed pending for ever, and every sweep (all accounts' events) raised with it."""
    collection_id = finished(who, f"{receiver.url}/h\u00e9?x=\u00fc")
    assert send(who, collection_id) == "delivered"
    assert receiver.received[0].path.endswith("/h%C3%A9?x=%C3%BC")


def test_an_attempt_that_fails_unexpectedly_is_one_failed_attempt(who, receiver, monkeypatch):
    """A bug met while sending costs that event an attempt (recorded, retried later), not
    the sweep: the other events are still delivered."""
    import worker.webhook_http

    def broken(*args, **kwargs):
        raise ValueError("something nobody foresaw")

    monkeypatch.setattr(worker.webhook_http, "post", broken)
    collection_id = finished(who, receiver.url)
    assert send(who, collection_id) == "pending"  # to be tried again later
    row = event(who, collection_id)
    assert row.attempts == 1 and "something nobody foresaw" in row.last_error


def test_a_cancelled_collection_s_event_counts_the_skips_its_cancel_recorded(who, receiver):
    """The URLs a cancel leaves are recorded after the transition that writes the event: the
    event is rendered again before its first attempt, so it counts them."""
    from collecting import control
    from collecting.frontier import Entry, Frontier

    db, redis = who.app.extensions["webdata.db"], who.app.extensions["webdata.redis"]
    row = collections.create(db, account_id=who.account_id, mode="batch", extract="page",
                             spec={"urls": ["http://a.test/"]}, max_running=5,
                             webhook_url=receiver.url)
    Frontier(redis, row.id).admit([Entry.of(f"http://a.test/{n}", 0) for n in range(3)])
    control.cancel(db, redis, row.id, who.account_id, retention=RETENTION)
    assert send(who, row.id) == "delivered"
    sent = json.loads(receiver.received[0].body)["collection"]
    assert sent["progress"]["skipped"]["cancelled"] == 3
    assert sent == {key: value for key, value in who.get(f"/collections/{row.id}").get_json()
                    .items() if key != "webhook"}
