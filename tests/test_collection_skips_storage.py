"""Skipped URLs in the database, on SQLite and PostgreSQL: counted by reason exactly whatever
the race, numbered in commit order, kept up to a cap (then only counted), nothing recorded
after the end, purged with the results."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from sqlalchemy import func, select

from collecting.frontier import Skip
from core.contract import SKIP_REASONS
from storage import collection_skips, collection_store, collections, retention
from storage.db import Database
from storage.models import CollectionSkip, CollectionStatus, utcnow
from tests.test_collections_storage import account, collection, page


@pytest.fixture
def db(database_url) -> Database:
    return Database(database_url)


def skip(n: int, reason: str = "depth", duplicate_of: str | None = None) -> Skip:
    url = f"http://a.test/s{n}"
    return Skip(url, url, reason, duplicate_of)


def counts(db: Database, collection_id: str) -> dict[str, int]:
    row = collections.get(db, collection_id)
    assert row is not None
    return collections.collection_body(row)["progress"]["skipped"]


def test_skips_are_counted_by_reason_and_kept_in_order(db):
    owner = account(db, 10)
    col = collection(db, owner)
    assert counts(db, col) == dict.fromkeys(SKIP_REASONS, 0)  # every reason, 0 when none
    collection_store.store(db, col, [page(1)], [skip(1), skip(2, "off_site")])
    collection_store.store(db, col, [], [skip(3, "duplicate", "http://a.test/1")])
    assert counts(db, col) == {**dict.fromkeys(SKIP_REASONS, 0), "depth": 1, "off_site": 1,
                               "duplicate": 1}
    rows, more = collection_skips.page(db, col, limit=2)
    assert [(r.seq, r.url) for r in rows] == [(1, "http://a.test/s1"), (2, "http://a.test/s2")]
    assert more == 2
    rows, more = collection_skips.page(db, col, after=2)
    assert [collection_skips.body(r) for r in rows] == [
        {"url": "http://a.test/s3", "reason": "duplicate", "duplicate_of": "http://a.test/1"}]
    assert more is None
    assert [r.url for r in collection_skips.page(db, col, reason="off_site")[0]] == [
        "http://a.test/s2"]


def test_counts_are_exact_under_a_race_and_rows_stop_at_the_cap(db, monkeypatch):
    monkeypatch.setattr(collection_skips, "KEPT", 25)
    col = collection(db, account(db, 10))
    batches = [[skip(n * 10 + i, SKIP_REASONS[i % 5]) for i in range(10)] for n in range(8)]
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda batch: collection_store.store(db, col, [], batch), batches))
    shown = counts(db, col)
    assert sum(shown.values()) == 80 and shown["depth"] == 16
    with db.session() as session:
        seqs = list(session.scalars(select(CollectionSkip.seq)
                                    .where(CollectionSkip.collection_id == col)
                                    .order_by(CollectionSkip.seq)))
    assert seqs == list(range(1, 26))  # 25 kept, numbered without a gap; the others counted


def test_nothing_is_recorded_after_the_end_and_the_purge_takes_the_skips(db):
    col = collection(db, account(db, 10))
    collection_store.store(db, col, [page(1)], [skip(1), skip(2)])
    assert collections.finish(db, col, CollectionStatus.COMPLETED, retention=timedelta(0))
    assert collection_store.store(db, col, [], [skip(3)]).closed
    assert sum(counts(db, col).values()) == 2
    retention.purge_expired(db, batch=1, now=utcnow() + timedelta(seconds=1))
    with db.session() as session:
        left = session.scalar(select(func.count()).select_from(CollectionSkip)
                              .where(CollectionSkip.collection_id == col))
    assert left == 0
    assert sum(counts(db, col).values()) == 2  # the counts stay, as the progress does


def test_what_a_stop_leaves_is_recorded_once_and_never_a_stored_page(db):
    """After a cancel, the URLs left are recorded in a transaction of their own; one whose
    page was stored just before the stop is a result, not a skip."""
    owner = account(db, 10)
    col = collection(db, owner)
    collection_store.store(db, col, [page(1)])
    assert collections.cancel(db, col, owner, retention=timedelta(0)) is not None
    stored = Skip(page(1).url, page(1).url, "cancelled")
    left = [stored, skip(7, "cancelled"), skip(8, "limit")]
    assert collection_skips.record_left(db, col, left) == 2
    assert counts(db, col) == {**dict.fromkeys(SKIP_REASONS, 0), "cancelled": 1, "limit": 1}
    assert [r.url for r in collection_skips.page(db, col)[0]] == [
        "http://a.test/s7", "http://a.test/s8"]
    assert collection_skips.record_left(db, "col_nope", left) == 0
    assert collection_skips.record_left(db, col, []) == 0


def test_a_cancel_records_a_few_batches_itself_and_leaves_the_rest_to_a_job(db, redis_url,
                                                                           monkeypatch):
    """A crawl may hold any number of URLs past ``max_pages``: the cancel's request records
    the first batches and hands the rest to a maintenance job, which records every one."""
    from redis import Redis

    from collecting import control, skips
    from collecting.frontier import Entry, Frontier
    from tests.conftest import _redis_db
    from worker import queues

    monkeypatch.setattr(control, "CANCEL_BATCHES", 1)
    monkeypatch.setattr(skips, "BATCH", 100)
    redis = Redis.from_url(_redis_db(redis_url, 8))  # the frontier tests' database
    owner = account(db, 10)
    col = collection(db, owner)
    frontier = Frontier(redis, col)
    frontier.admit([Entry.of(f"http://a.test/p{n}", 1) for n in range(250)], budget=1)
    maintenance = queues.queue(queues.MAINTENANCE, redis)
    before = maintenance.count
    row = control.cancel(db, redis, col, owner, retention=timedelta(0))
    assert row is not None and sum(counts(db, col).values()) == 100  # one batch, here
    assert maintenance.count == before + 1  # the rest, by a job: as it would run
    job = maintenance.jobs[-1]
    assert (job.func_name, list(job.args)) == (control.RECORD_REST_JOB, [col])
    maintenance.remove(job)
    assert skips.record_left(db, frontier, col)
    assert counts(db, col) == {**dict.fromkeys(SKIP_REASONS, 0), "limit": 249,
                               "cancelled": 1}
