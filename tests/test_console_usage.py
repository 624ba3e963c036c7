"""The console's chart data (:mod:`storage.usage`) on SQLite and PostgreSQL: each day's sums are
the ledger's (what the history bills that day), grants are not usage, days outside the window
are left out, and the request count and failure rate are the history's."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, time, timedelta

from sqlalchemy import func, select

from storage import accounts, ledger, usage
from storage.db import Database
from storage.models import Activity, LedgerEntry, Outcome, utcnow


def account(db: Database, credits: int) -> str:
    with db.write() as session:
        account_id = accounts.create_account(session, f"usage-{uuid.uuid4().hex[:10]}").id
    ledger.grant(db, account_id, credits, f"grant:{uuid.uuid4().hex}")
    return account_id


def charge(db: Database, account_id: str, operation: str, amount: int, succeeded: bool) -> None:
    """A request as the API bills it: reserve, then capture or release."""
    request = ledger.Charge(account_id, f"request:{uuid.uuid4().hex}", amount, operation,
                            request_id=f"req_{uuid.uuid4().hex}")
    ledger.reserve(db, request)
    if succeeded:
        ledger.capture(db, request)
    else:
        ledger.release(db, request, "fetch_failed")


def backdate(db: Database, account_id: str, days: int, operation: str, credits: int) -> None:
    """A line of history (and its ledger entry) ``days`` ago, at 23:59 UTC: the day's edge."""
    at = datetime.combine(utcnow().date() - timedelta(days=days), time(23, 59), tzinfo=UTC)
    key = f"old:{uuid.uuid4().hex}"
    with db.write() as session:
        session.add(Activity(account_id=account_id, operation=operation, credits=credits,
                             status=Outcome.SUCCEEDED, at=at))
        session.add(LedgerEntry(account_id=account_id, charge_key=key, phase="open",
                                kind="reserve", amount=-credits, created_at=at))


def test_each_days_sums_are_the_ledgers(database_url):
    db = Database(database_url)
    account_id = account(db, 1000)
    for operation, amount, succeeded in [("scrape", 1, True), ("scrape", 1, True),
                                         ("scrape", 1, False), ("contacts", 1, True),
                                         ("search", 5, True), ("search_news", 5, True),
                                         ("video_platform", 1, False), ("products", 1, True)]:
        charge(db, account_id, operation, amount, succeeded)
    backdate(db, account_id, 3, "collection", 7)
    backdate(db, account_id, 29, "scrape", 2)  # the window's first day
    backdate(db, account_id, 30, "scrape", 100)  # one day before it

    shown = usage.daily(db, account_id)

    assert len(shown.days) == 30 and shown.days[-1] == utcnow().date()
    today, three_ago = 29, 26
    assert shown.credits["scrape"][today] == 2 and shown.credits["scrape"][0] == 2
    assert shown.credits["search"][today] == 10
    assert shown.credits["contacts"][today] == 1 and shown.credits["products"][today] == 1
    assert shown.credits["video"][today] == 0  # failed: nothing charged, nothing shown
    assert shown.credits["collections"][three_ago] == 7
    assert shown.requests == 8 + 2 and shown.failed == 2  # the window's lines, grants aside
    assert shown.failure_rate == 2 / 10
    # The chart's total is what the ledger took from the balance in the window (grants aside).
    since = datetime.combine(shown.days[0], time(), tzinfo=UTC)
    with db.session() as session:
        spent = -session.scalar(select(func.sum(LedgerEntry.amount)).where(
            LedgerEntry.account_id == account_id, LedgerEntry.kind != "grant",
            LedgerEntry.created_at >= since))
    assert shown.total == spent == 2 + 10 + 1 + 1 + 7 + 2
    db.dispose()


def test_an_account_without_history_has_an_empty_chart(database_url):
    db = Database(database_url)
    shown = usage.daily(db, account(db, 5))
    assert shown.requests == 0 and shown.failure_rate == 0.0 and shown.total == 0
    assert set(shown.credits) == set(usage.SERIES)
    assert all(values == [0] * 30 for values in shown.credits.values())
    db.dispose()
