"""Webhook events beyond a collection's end, on SQLite and PostgreSQL, sent to real receivers
on loopback: ``collection.started``, one ``collection.page`` per stored page (exactly once in
the outbox whatever the retries, exactly once at the receiver by ``webhook-id``), the drain
that sends them in batches and stops early on a receiver that keeps failing, and a receiver
that is down then back getting everything."""

from __future__ import annotations

import json
from collections import Counter
from datetime import timedelta

import pytest
from sqlalchemy import func, select
from standardwebhooks.webhooks import Webhook

from api import create_app
from core.contract import COLLECTION_EVENTS
from storage import collection_store, collections, webhooks
from storage.collection_results import page_key
from storage.collection_store import PageOutcome
from storage.models import CollectionStatus, WebhookEvent, utcnow
from tests.conftest import Customer, make_config, new_customer
from tests.support.books import assert_books
from tests.support.webhook_receiver import (  # noqa: F401 (fixtures: used by name)
    Receiver,
    nothing_left_due,
    start_receiver,
)
from worker import webhooks as sender

RETENTION = timedelta(days=7)
ALL = list(COLLECTION_EVENTS)


@pytest.fixture
def app(database_url, redis_url):
    return create_app(make_config(database_url, redis_url))


@pytest.fixture
def who(app) -> Customer:
    return new_customer(app, credits=1000, plan="standard")


def db_of(who: Customer):
    return who.app.extensions["webdata.db"]


def config_of(who: Customer):
    return who.app.config["WEBDATA"]


def running(who: Customer, url: str | None, events: list[str] | None = None) -> str:
    """A started collection of ``who`` asking for ``events`` at ``url``."""
    db = db_of(who)
    row = collections.create(db, account_id=who.account_id, mode="batch", extract="page",
                             spec={"urls": ["http://a.test/"]}, max_running=50,
                             webhook_url=url, webhook_events=events)
    collections.start(db, row.id)
    return row.id


def outcomes(first: int, count: int) -> list[PageOutcome]:
    """Pages ``first`` to ``first + count - 1``: every seventh failed, one with a result
    over 64 KB."""
    made = []
    for n in range(first, first + count):
        url = f"http://a.test/p{n}"
        if n % 7 == 0:
            made.append(PageOutcome(page_key(url), url, "failed", status_code=404,
                                    error={"error": "target_http_error",
                                           "message": "The page answered 404."}))
        else:
            text = "x" * (70_000 if n == 5 else 10)
            made.append(PageOutcome(page_key(url), url, "succeeded", final_url=url,
                                    status_code=200, fetched_at="2026-11-27T00:00:00Z",
                                    data={"title": f"page {n}", "text": text}))
    return made


def events_of(who: Customer, collection_id: str, event: str | None = None) -> list[WebhookEvent]:
    query = select(WebhookEvent).where(WebhookEvent.collection_id == collection_id)
    if event is not None:
        query = query.where(WebhookEvent.event == event)
    with db_of(who).session() as session:
        return list(session.scalars(query))


def delivered_ids(receiver: Receiver, answered: Counter | None = None) -> Counter:
    """How many times each ``webhook-id`` reached the receiver."""
    return Counter(request.headers["webhook-id"] for request in receiver.received)


def test_each_stored_page_has_one_event_and_each_is_delivered_once(who, receiver):
    secret = who.post("/account/webhook-secret", None).get_json()["secret"]
    collection_id = running(who, receiver.url, ALL)
    db = db_of(who)
    batches = [outcomes(1, 100), outcomes(101, 100), outcomes(201, 100)]
    for batch in batches:
        assert collection_store.store(db, collection_id, batch).events == len(batch)
    again = collection_store.store(db, collection_id, batches[1])  # a retried batch
    assert again.events == 0 and len(again.settled) == 100
    assert len(events_of(who, collection_id, webhooks.PAGE)) == 300
    assert collections.finish(db, collection_id, CollectionStatus.COMPLETED,
                              retention=RETENTION)
    sent = sender.drain(collection_id, config_of(who))
    assert sent == 302  # started, 300 pages, completed
    counts = delivered_ids(receiver)
    assert len(counts) == 302 and set(counts.values()) == {1}
    pages: dict[int, dict] = {}
    kinds = Counter()
    for request in receiver.received:
        headers = {name.lower(): value for name, value in request.headers.items()}
        payload = Webhook(secret).verify(request.body, headers)  # raises unless signed
        assert payload["id"] == headers["webhook-id"]
        kinds[payload["event"]] += 1
        if payload["event"] == webhooks.PAGE:
            assert payload["collection_id"] == collection_id
            pages[payload["page"]["seq"]] = payload
    assert kinds == {"collection.started": 1, "collection.page": 300,
                     "collection.completed": 1}
    assert sorted(pages) == list(range(1, 301))
    for seq, payload in pages.items():
        if seq % 25 and payload["result"] is not None:  # a few (within the rate limit)
            continue
        answer = who.get(payload["result_url"].removeprefix("/api/service/v1"))
        assert answer.status_code == 200, payload["result_url"]
        [result] = answer.get_json()["results"]
        if payload["result"] is not None:
            assert payload["result"] == result
        assert payload["page"]["url"] == result["url"]
        assert payload["page"]["status"] == result["status"]
    failed = [p for p in pages.values() if p["page"]["status"] == "failed"]
    assert len(failed) == 300 // 7
    assert {p["page"]["error"] for p in failed} == {"target_http_error"}
    assert all(p["page"]["error_message"] for p in failed)
    big = [p for p in pages.values() if p["result"] is None]
    assert [p["page"]["url"] for p in big] == ["http://a.test/p5"]  # over 64 KB: a link only
    shown = who.get(f"/collections/{collection_id}").get_json()
    assert shown["webhook"] == {"status": "delivered", "attempts": 1, "last_status": 204}
    assert sender.drain(collection_id, config_of(who)) == 0  # nothing twice
    assert_books(db, who.account_id)


def test_events_follow_webhook_events(who, receiver):
    db = db_of(who)
    default = running(who, receiver.url)
    collection_store.store(db, default, outcomes(1, 3))
    assert [e.event for e in events_of(who, default)] == []
    collections.finish(db, default, CollectionStatus.CANCELLED, retention=RETENTION)
    assert [e.event for e in events_of(who, default)] == ["collection.cancelled"]
    pages_only = running(who, receiver.url, [webhooks.PAGE])
    collection_store.store(db, pages_only, outcomes(1, 3))
    collections.finish(db, pages_only, CollectionStatus.COMPLETED, retention=RETENTION)
    assert Counter(e.event for e in events_of(who, pages_only)) == {"collection.page": 3}
    assert who.get(f"/collections/{pages_only}").get_json()["webhook"] is None
    started = running(who, receiver.url, ["collection.started", "collection.failed"])
    collections.finish(db, started, CollectionStatus.COMPLETED, retention=RETENTION)
    assert [e.event for e in events_of(who, started)] == ["collection.started"]
    assert collections.start(db, started) is False  # started once: one event
    assert sender.drain(started, config_of(who)) == 1
    [request] = [r for r in receiver.received if json.loads(r.body)["collection_id"] == started]
    payload = json.loads(request.body)
    assert payload["id"] == webhooks.event_id(started) + "_started"
    assert payload["created_at"] == who.get(f"/collections/{started}").get_json()["started_at"]


def test_a_receiver_down_then_back_gets_everything_once(who, receiver):
    """Down (503): the drain tries a few, counts an attempt for the rest unsent (each on its
    backoff); back: the next drains, on the fake clock, send each event once with a 2xx."""
    db, config = db_of(who), config_of(who)
    collection_id = running(who, receiver.url, [webhooks.PAGE])
    collection_store.store(db, collection_id, outcomes(1, 120))
    receiver.statuses = [503]
    now = utcnow()
    tried = sender.drain(collection_id, config, now=now)
    assert sender.BREAKER <= tried <= sender.DRAIN_BATCH  # stopped early, not 120 attempts
    rows = events_of(who, collection_id)
    assert {row.attempts for row in rows} == {1} and {row.status for row in rows} == {"pending"}
    assert sender.drain(collection_id, config, now=now + timedelta(seconds=1)) == 0  # backoff
    later = now + timedelta(seconds=10)
    assert sender.drain(collection_id, config, now=later) <= sender.DRAIN_BATCH  # still down
    receiver.statuses = [204]
    assert sender.drain(collection_id, config, now=later + timedelta(seconds=301)) == 120
    ok = Counter(request.headers["webhook-id"] for request, status in
                 zip(receiver.received, _statuses(receiver), strict=True) if status == 204)
    assert len(ok) == 120 and set(ok.values()) == {1}
    assert {row.status for row in events_of(who, collection_id)} == {"delivered"}


def test_a_receiver_back_from_an_outage_gets_its_backlog_at_the_next_sweep(who, receiver):
    """After two failed attempts each, the events wait 5 minutes, then 30: the sweep probes
    the receiver with one event instead. A failed probe costs no attempt; the first that
    succeeds makes every waiting event due, sent in the same sweep, each once."""
    db, config = db_of(who), config_of(who)
    collection_id = running(who, receiver.url, [webhooks.PAGE])
    collection_store.store(db, collection_id, outcomes(1, 40))
    receiver.statuses = [503]
    now = utcnow()
    sender.drain(collection_id, config, now=now)
    sender.drain(collection_id, config, now=now + timedelta(seconds=10))
    assert {row.attempts for row in events_of(who, collection_id)} == {2}  # next in 5 min
    sent = len(receiver.received)
    sender.deliver_due(config, now=now + timedelta(seconds=20))  # still down
    assert len(receiver.received) == sent + 1  # one probe, not counted
    rows = events_of(who, collection_id)
    assert {row.attempts for row in rows} == {2}
    assert {row.claimed_until for row in rows} == {None}
    receiver.statuses = [204]
    assert sender.deliver_due(config, now=now + timedelta(seconds=80)) >= 40
    ok = Counter(request.headers["webhook-id"] for request, status in
                 zip(receiver.received, _statuses(receiver), strict=True) if status == 204)
    assert len(ok) == 40 and set(ok.values()) == {1}
    assert {row.status for row in events_of(who, collection_id)} == {"delivered"}


def test_a_page_event_s_result_is_read_when_it_is_sent(who, receiver):
    """The outbox keeps the page, not its result (about 1 KB a row): each attempt reads the
    result as stored then, so a crawl's page cleaned of its repeated blocks after the
    event was written is sent cleaned."""
    from storage import collection_results

    db = db_of(who)
    collection_id = running(who, receiver.url, [webhooks.PAGE])
    collection_store.store(db, collection_id, outcomes(1, 3))
    rows = events_of(who, collection_id)
    assert all(row.payload.endswith(',"result":null}') and len(row.payload) < 1024
               for row in rows)
    collection_results.rewrite_data(db, collection_id, {2: {"title": "cleaned \u00e9"}})
    assert sender.drain(collection_id, config_of(who)) == 3
    sent = {json.loads(r.body)["page"]["seq"]: json.loads(r.body) for r in receiver.received}
    assert sent[2]["result"]["data"] == {"title": "cleaned \u00e9"}
    assert sent[1]["result"]["data"] == {"title": "page 1", "text": "x" * 10}
    assert sent[1]["result"]["url"] == "http://a.test/p1"
    assert sent[1]["result"]["status"] == "succeeded"


def _statuses(receiver: Receiver) -> list[int]:
    """The status each received request was answered with: 503 until the first 204."""
    ids = [request.headers["webhook-id"] for request in receiver.received]
    seen: set[str] = set()
    answered = []
    for position, event in enumerate(ids):
        # an event is received again only after a failed attempt: its last arrival is the 204
        answered.append(204 if event not in ids[position + 1:] else 503)
        seen.add(event)
    return answered


def test_a_dead_receiver_does_not_hold_the_sweep(app, who, receiver, database_url):
    """One account's receiver answers 503 to everything: the sweep stops sending to it after a
    few failures, and another account's events are all sent in the same sweep."""
    dead = start_receiver()
    try:
        dead.statuses = [503]
        other = new_customer(app, credits=100, plan="standard")
        db = db_of(who)
        doomed = running(who, dead.url, [webhooks.PAGE])
        collection_store.store(db, doomed, outcomes(1, 100))
        fine = running(other, receiver.url, [webhooks.PAGE])
        collection_store.store(db, fine, outcomes(1, 40))
        sender.deliver_due(config_of(who))
        assert len(dead.received) <= sender.DRAIN_BATCH
        assert len(delivered_ids(receiver)) == 40
        with db.session() as session:
            pending = session.scalar(select(func.count()).select_from(WebhookEvent).where(
                WebhookEvent.collection_id == doomed, WebhookEvent.attempts == 1))
        assert pending == 100  # each counted one attempt, none lost, all still pending
    finally:
        dead.close()


@pytest.mark.parametrize("body, field", [
    ({"webhook_events": ["collection.page"]}, "webhook_events"),
    ({"webhook_url": "http://127.0.0.2/hooks", "webhook_events": ["collection.paged"]},
     "webhook_events"),
    ({"webhook_url": "http://127.0.0.2/hooks", "webhook_events": []}, "webhook_events"),
])
def test_webhook_events_are_checked(who, body, field):
    answer = who.post("/collections", {"mode": "batch", "urls": ["http://a.test/"], **body})
    assert answer.status_code == 422, answer.get_json()
    assert field in answer.get_json()["errors"]


def test_the_purge_deletes_page_events_and_keeps_the_end(who, receiver):
    from storage import retention

    db = db_of(who)
    collection_id = running(who, receiver.url, ALL)
    collection_store.store(db, collection_id, outcomes(1, 30))
    collections.finish(db, collection_id, CollectionStatus.COMPLETED, retention=RETENTION)
    retention.purge_expired(db, batch=7, now=utcnow() + RETENTION + timedelta(seconds=1))
    assert [row.id for row in events_of(who, collection_id)] == [
        webhooks.event_id(collection_id)]
