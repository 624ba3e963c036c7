"""Credits under concurrency, and the ledger's guarantees, on SQLite and PostgreSQL."""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
from sqlalchemy import func, select, text

from api import create_app
from storage import ledger
from storage.db import Database
from storage.models import Activity, LedgerEntry
from tests.conftest import make_config, new_customer


@pytest.fixture
def money_app(database_url, redis_url, workers):
    return create_app(make_config(database_url, redis_url))


def _sums(db: Database, account_id: str) -> tuple[int, int]:
    with db.session() as session:
        ledger_sum = session.scalar(
            select(func.coalesce(func.sum(LedgerEntry.amount), 0))
            .where(LedgerEntry.account_id == account_id))
        history_sum = session.scalar(
            select(func.coalesce(func.sum(Activity.credits), 0))
            .where(Activity.account_id == account_id))
    return int(ledger_sum), int(history_sum)


def test_fifty_concurrent_scrapes_on_a_balance_of_ten(money_app, site):
    # Enterprise's 48 slots: at most 10 requests hold a reservation, and so a slot, at once;
    # on free's 4, some would be refused 429 over the cap (the rest 402s all the same).
    customer = new_customer(money_app, credits=10, plan="enterprise")

    def call(_):
        client = money_app.test_client()
        return customer.post("/scrape", {"url": f"{site}/article"}, client=client).status_code

    with ThreadPoolExecutor(max_workers=50) as pool:
        statuses = list(pool.map(call, range(50)))
    assert statuses.count(200) == 10, statuses
    assert statuses.count(402) == 40, statuses
    assert customer.balance() == 0
    db = money_app.extensions["webdata.db"]
    ledger_sum, history_sum = _sums(db, customer.account_id)
    assert ledger_sum == 0  # the balance is the sum of the ledger
    assert history_sum == 0  # and minus the sum of the history
    rows = customer.activity()
    assert len(rows) == 51  # 50 requests + the grant
    assert sum(1 for r in rows if r["status"] == "succeeded" and r["operation"] == "scrape") == 10


def test_reserve_capture_release_are_each_once(database_url):
    db = Database(database_url)
    app = create_app(make_config(database_url, "redis://127.0.0.1:1/0"))
    customer = new_customer(app, credits=5)
    charge = ledger.Charge(customer.account_id, f"test:{uuid.uuid4().hex}", 2, "scrape")
    assert ledger.reserve(db, charge) == 3
    with pytest.raises(ledger.ChargeSettled):
        ledger.reserve(db, charge)
    assert ledger.balance_of(db, customer.account_id) == 3  # the second hold rolled back
    assert ledger.capture(db, charge) == 3
    with pytest.raises(ledger.ChargeSettled):
        ledger.capture(db, charge)
    assert ledger.release(db, charge) == 3  # settled already: releasing changes nothing
    other = ledger.Charge(customer.account_id, f"test:{uuid.uuid4().hex}", 3, "scrape")
    ledger.reserve(db, other)
    assert ledger.release(db, other, "fetch_failed") == 3
    assert ledger.release(db, other, "fetch_failed") == 3
    with pytest.raises(ledger.InsufficientCredits) as caught:
        ledger.reserve(db, ledger.Charge(customer.account_id, "test:big", 4, "scrape"))
    assert (caught.value.needed, caught.value.balance) == (4, 3)
    assert _sums(db, customer.account_id) == (3, -3)
    # the str Enums reach the database as their plain values
    with db.session() as session:
        entries = session.execute(text(
            "SELECT phase, kind FROM ledger_entries WHERE charge_key = :key ORDER BY id"),
            {"key": charge.key}).all()
        statuses = session.execute(text(
            "SELECT status, error FROM activity WHERE account_id = :account ORDER BY id"),
            {"account": customer.account_id}).all()
    assert [tuple(row) for row in entries] == [("open", "reserve"), ("close", "capture")]
    assert [tuple(row) for row in statuses] == [
        ("succeeded", None), ("succeeded", None), ("failed", "fetch_failed")]
    assert all(type(value) is str for row in [*entries, *statuses] for value in row if value)


def test_concurrent_reservations_never_overdraw(database_url):
    db = Database(database_url)
    app = create_app(make_config(database_url, "redis://127.0.0.1:1/0"))
    customer = new_customer(app, credits=7)

    def hold(n):
        try:
            ledger.reserve(db, ledger.Charge(customer.account_id, f"t:{uuid.uuid4().hex}", 1, "x"))
            return True
        except ledger.InsufficientCredits:
            return False

    with ThreadPoolExecutor(max_workers=20) as pool:
        results = list(pool.map(hold, range(40)))
    assert results.count(True) == 7
    assert ledger.balance_of(db, customer.account_id) == 0
