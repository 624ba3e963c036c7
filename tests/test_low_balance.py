"""``account.low_balance``, on SQLite and PostgreSQL: written in the transaction of the
charge that takes the balance below the account's threshold, once, and again only after a
grant lifted it back; ``PATCH /account`` sets it. The books stay balanced throughout."""

from __future__ import annotations

import json
import uuid
from datetime import timedelta

import pytest
from sqlalchemy import select
from standardwebhooks.webhooks import Webhook

from api import create_app
from storage import collection_store, collections, ledger
from storage.collection_results import page_key
from storage.collection_store import PageOutcome
from storage.models import WebhookEvent
from tests.conftest import Customer, make_config, new_customer
from tests.support.books import assert_books
from tests.support.webhook_receiver import nothing_left_due, start_receiver  # noqa: F401 (autouse)
from worker import webhooks as sender

HOOK = "http://127.0.0.2/hooks"


@pytest.fixture
def app(database_url, redis_url):
    return create_app(make_config(database_url, redis_url))


@pytest.fixture
def who(app) -> Customer:
    return new_customer(app, credits=20, plan="standard")


def low_events(who: Customer) -> list[dict]:
    with who.app.extensions["webdata.db"].session() as session:
        return [json.loads(row.payload) for row in session.scalars(
            select(WebhookEvent).where(WebhookEvent.account_id == who.account_id,
                                       WebhookEvent.event == "account.low_balance")
            .order_by(WebhookEvent.created_at))]


def spend(who: Customer, amount: int = 1) -> int:
    db = who.app.extensions["webdata.db"]
    return ledger.spend(db, ledger.Charge(who.account_id, f"t:{uuid.uuid4().hex}", amount,
                                          "scrape"))


def patch(who: Customer, body: dict):
    return who.app.test_client().patch("/api/service/v1/account", json=body,
                                       headers={"Authorization": f"Bearer {who.key}"})


def test_crossing_downwards_sends_once_until_a_grant_lifts_it_back(who):
    answer = patch(who, {"low_balance_threshold": 15, "webhook_url": HOOK})
    assert answer.status_code == 200, answer.get_json()
    shown = who.get("/account").get_json()
    assert (shown["low_balance_threshold"], shown["webhook_url"]) == (15, HOOK)
    db = who.app.extensions["webdata.db"]
    for _ in range(5):
        spend(who)  # 20 → 15: not below yet
    assert low_events(who) == []
    assert spend(who) == 14  # crossed
    [event] = low_events(who)
    assert (event["event"], event["account_id"], event["balance"], event["threshold"]) == (
        "account.low_balance", who.account_id, 14, 15)
    spend(who, 3)  # further spending: nothing more
    charge = ledger.Charge(who.account_id, f"t:{uuid.uuid4().hex}", 2, "scrape")
    ledger.reserve(db, charge)
    ledger.release(db, charge)  # a release is not a grant: no re-arming
    spend(who)
    assert len(low_events(who)) == 1
    ledger.grant(db, who.account_id, 2, f"g:{uuid.uuid4().hex}")  # 12: still below
    spend(who)
    assert len(low_events(who)) == 1
    ledger.grant(db, who.account_id, 10, f"g:{uuid.uuid4().hex}")  # 21: above again
    spend(who, 6)  # 15: at the threshold, not below
    assert len(low_events(who)) == 1
    ledger.reserve(db, ledger.Charge(who.account_id, f"t:{uuid.uuid4().hex}", 1, "scrape",
                                     expires_at=None))  # 14: below again, by a reservation
    events = low_events(who)
    assert len(events) == 2 and events[1]["balance"] == 14 and events[0]["id"] != events[1]["id"]


def test_a_collection_page_charge_crosses_too_and_the_event_is_delivered(who):
    receiver = start_receiver()
    try:
        secret = who.post("/account/webhook-secret", None).get_json()["secret"]
        assert patch(who, {"low_balance_threshold": 18, "webhook_url": receiver.url}
                     ).status_code == 200
        db = who.app.extensions["webdata.db"]
        row = collections.create(db, account_id=who.account_id, mode="batch", extract="page",
                                 spec={"urls": ["http://a.test/"]}, max_running=5)
        pages = [PageOutcome(page_key(f"http://a.test/{n}"), f"http://a.test/{n}", "succeeded")
                 for n in range(5)]
        assert collection_store.store(db, row.id, pages).charged == 5
        [event] = low_events(who)
        assert (event["balance"], event["threshold"]) == (15, 18)
        assert sender.deliver_due(who.app.config["WEBDATA"]) >= 1
        [request] = [r for r in receiver.received
                     if json.loads(r.body)["event"] == "account.low_balance"]
        headers = {name.lower(): value for name, value in request.headers.items()}
        assert Webhook(secret).verify(request.body, headers)["id"] == event["id"]
        collections.finish(db, row.id, "completed", retention=timedelta(days=1))
        assert_books(db, who.account_id)
    finally:
        receiver.close()


def test_no_threshold_or_no_url_sends_nothing(who):
    spend(who, 19)
    assert patch(who, {"low_balance_threshold": 10}).status_code == 200  # no URL
    ledger.grant(who.app.extensions["webdata.db"], who.account_id, 20, f"g:{uuid.uuid4().hex}")
    spend(who, 15)
    assert low_events(who) == []
    line = next(a for a in who.activity() if a["operation"] == "account_update")
    assert line["credits"] == 0 and line["status"] == "succeeded"


@pytest.mark.parametrize("body, field", [
    ({"low_balance_threshold": -1}, "low_balance_threshold"),
    ({"low_balance_threshold": 1.5}, "low_balance_threshold"),
    ({"webhook_url": "http://127.0.0.1/hooks"}, "webhook_url"),  # private: the policy refuses
    ({"webhook_url": "ftp://example.com/"}, "webhook_url"),
    ({"balance": 100}, "balance"),
])
def test_patch_account_is_checked(who, body, field):
    answer = patch(who, body)
    assert answer.status_code == 422, answer.get_json()
    assert field in answer.get_json()["errors"]
    shown = who.get("/account").get_json()
    assert (shown["low_balance_threshold"], shown["webhook_url"]) == (None, None)
