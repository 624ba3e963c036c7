"""Collections in the database, on SQLite and PostgreSQL: a page is stored and charged once
whatever retries and races happen, results are numbered in commit order, nothing is stored
after the end, exactly one terminal transition, and the balance stays minus the history."""

from __future__ import annotations

import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from sqlalchemy import func, select

from storage import accounts, collection_results, collection_store, collections, ledger
from storage.collection_store import PageOutcome
from storage.db import Database
from storage.models import Activity, CollectionStatus, LedgerEntry

RETENTION = timedelta(days=7)


@pytest.fixture
def db(database_url) -> Database:
    return Database(database_url)


def account(db: Database, credits: int, plan: str = "standard") -> str:
    with db.session() as session:
        row = accounts.create_account(session, f"col-{uuid.uuid4().hex[:10]}", plan)
        account_id = row.id
    if credits:
        ledger.grant(db, account_id, credits, f"grant:{uuid.uuid4().hex}")
    return account_id


def collection(db: Database, account_id: str, max_running: int = 5) -> str:
    return collections.create(db, account_id=account_id, mode="batch", extract="page",
                              spec={"urls": ["http://a.test/"]}, max_running=max_running).id


def page(n: int, ok: bool = True) -> PageOutcome:
    url = f"http://a.test/{n}"
    return PageOutcome(key=collection_results.page_key(url), url=url,
                       status="succeeded" if ok else "failed", data={"n": n} if ok else None,
                       error=None if ok else {"error": "fetch_failed", "message": "x"})


def sums(db: Database, account_id: str) -> tuple[int, int, int]:
    """(balance, sum of the ledger, sum of the history's credits)."""
    with db.session() as session:
        ledger_sum = session.scalar(select(func.coalesce(func.sum(LedgerEntry.amount), 0))
                                    .where(LedgerEntry.account_id == account_id))
        history = session.scalar(select(func.coalesce(func.sum(Activity.credits), 0))
                                 .where(Activity.account_id == account_id))
    return ledger.balance_of(db, account_id), int(ledger_sum), int(history)


def test_pages_are_stored_and_charged_once(db):
    owner = account(db, 10)
    col = collection(db, owner)
    first = collection_store.store(db, col, [page(1), page(2), page(3, ok=False)])
    assert first.charged == 2 and not first.out_of_credits
    again = collection_store.store(db, col, [page(2), page(4)])  # /2 again: a lease that expired
    assert again.charged == 1
    row = collections.get(db, col)
    assert (row.succeeded, row.failed, row.credits_used) == (3, 1, 3)
    rows, more = collection_results.page(db, col)
    assert [r.seq for r in rows] == [1, 2, 3, 4] and more is None
    assert [r.url.rsplit("/", 1)[1] for r in rows] == ["1", "2", "3", "4"]
    balance, ledger_sum, history = sums(db, owner)
    assert balance == 7 == ledger_sum == -history


def test_concurrent_stores_number_results_without_gaps(db):
    owner = account(db, 1000)
    col = collection(db, owner)
    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(lambda n: collection_store.store(
            db, col, [page(n * 10 + i) for i in range(5)]), range(8)))
    rows, _ = collection_results.page(db, col, limit=100)
    assert [r.seq for r in rows] == list(range(1, 41))
    assert collections.get(db, col).credits_used == 40
    assert sums(db, owner)[0] == 960


def test_results_page_by_position_and_status(db):
    col = collection(db, account(db, 10))
    collection_store.store(db, col, [page(n, ok=n % 2 == 0) for n in range(6)])
    first, position = collection_results.page(db, col, limit=2)
    rest, end = collection_results.page(db, col, after=position, limit=10)
    assert [r.seq for r in first + rest] == list(range(1, 7)) and end is None
    failed, _ = collection_results.page(db, col, status="failed")
    assert {r.status for r in failed} == {"failed"} and len(failed) == 3


def test_the_balance_runs_out(db):
    owner = account(db, 2)
    col = collection(db, owner)
    stored = collection_store.store(db, col, [page(1), page(2, ok=False), page(3), page(4)])
    assert stored.out_of_credits and stored.charged == 2
    rows, _ = collection_results.page(db, col)
    assert [r.url.rsplit("/", 1)[1] for r in rows] == ["1", "2", "3"]  # /4 was not paid for
    assert sums(db, owner)[0] == 0


def test_nothing_is_stored_after_the_end(db):
    owner = account(db, 10)
    col = collection(db, owner)
    collection_store.store(db, col, [page(1)])
    row = collections.cancel(db, col, owner, retention=RETENTION)
    assert row.status == CollectionStatus.CANCELLED and row.expires_at is not None
    assert collection_store.store(db, col, [page(2)]).closed
    assert collections.get(db, col).credits_used == 1
    assert collections.cancel(db, col, owner, retention=RETENTION).status == "cancelled"
    assert collections.cancel(db, col, account(db, 0), retention=RETENTION) is None


def test_exactly_one_terminal_transition(db):
    col = collection(db, account(db, 10))
    collections.start(db, col)
    with ThreadPoolExecutor(max_workers=6) as pool:
        won = list(pool.map(lambda _: collections.finish(
            db, col, CollectionStatus.COMPLETED, retention=RETENTION), range(6)))
    assert won.count(True) == 1
    with pytest.raises(collections.NotCancellable):
        collections.cancel(db, col, collections.get(db, col).account_id, retention=RETENTION)


def test_the_plan_caps_running_collections_and_the_balance_the_start(db):
    owner = account(db, 5)
    collection(db, owner, max_running=2)
    collection(db, owner, max_running=2)
    with pytest.raises(collections.CollectionLimit):
        collection(db, owner, max_running=2)
    with pytest.raises(ledger.InsufficientCredits):
        collection(db, account(db, 0))
    history = [row for row in _history(db, owner) if row.operation == "collection"]
    assert len(history) == 2 and all(row.collection_id for row in history)


def test_concurrent_starts_never_pass_the_running_cap(db):
    """Starts at once (released together) for accounts allowed one running collection: one
    starts each time."""
    def start(owner: str, together: threading.Barrier) -> bool:
        together.wait()
        try:
            collection(db, owner, max_running=1)
        except collections.CollectionLimit:
            return False
        return True

    for _ in range(10):
        owner, together = account(db, 5), threading.Barrier(6)
        with ThreadPoolExecutor(6) as pool:
            started = list(pool.map(lambda _: start(owner, together), range(6)))  # noqa: B023
        assert started.count(True) == 1


def _history(db: Database, account_id: str) -> list[Activity]:
    with db.session() as session:
        return list(session.scalars(select(Activity).where(Activity.account_id == account_id)))
