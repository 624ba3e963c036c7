"""The page cache in the database, on SQLite and PostgreSQL: entries kept compressed and read
back whole, replaced in place, the size in all exact under a race, the least recently used
evicted past the cap, a 304 refreshing an entry."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from sqlalchemy import func, select

from storage import page_cache
from storage.db import Database
from storage.page_models import PageCacheEntry

RESULT = {"url": "https://a.test/", "status": "succeeded", "final_url": "https://a.test/",
          "status_code": 200, "fetched_at": "2026-11-27T03:00:00Z", "error": None,
          "data": {"title": "Tides", "text": "Twice a day. " * 200}}


@pytest.fixture
def db(database_url) -> Database:
    db = Database(database_url)
    page_cache.clear(db)  # the table is shared by every test of the session
    return db


def put(db: Database, key: str, max_bytes: int = 10**9, **extra) -> bool:
    return page_cache.put(db, key, operation="scrape", url="https://a.test/",
                          result={**RESULT, **extra}, max_bytes=max_bytes)


def stored_bytes(db: Database) -> int:
    with db.session() as session:
        return session.scalar(select(func.coalesce(func.sum(PageCacheEntry.size), 0)))


def test_an_entry_is_kept_compressed_and_read_back_whole(db):
    assert put(db, "k1")
    entry = page_cache.get(db, "k1")
    assert entry is not None and entry.result == RESULT and entry.age() < 60
    entries, total = page_cache.size(db)
    assert entries == 1 and total == stored_bytes(db) < len(str(RESULT)) / 4
    assert page_cache.get(db, "nope") is None
    assert put(db, "k1", status_code=203)  # replaced in place
    assert page_cache.get(db, "k1").result["status_code"] == 203
    assert page_cache.size(db) == (1, stored_bytes(db))


def test_the_size_in_all_is_exact_when_processes_race(db):
    def store(n: int) -> None:
        for i in range(5):
            put(db, f"race{(n + i) % 4}", title=f"{n}-{i}")

    threads = [threading.Thread(target=store, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert page_cache.size(db) == (4, stored_bytes(db))


def test_the_least_recently_used_go_first_past_the_cap(db, monkeypatch):
    monkeypatch.setattr(page_cache, "TOUCH_EVERY", timedelta(0))
    monkeypatch.setattr(page_cache, "MAX_SHARE", 1)
    assert put(db, "a") and put(db, "b")
    one = page_cache.size(db)[1] // 2
    cap = 3 * one + one // 2  # room for three
    assert put(db, "c", max_bytes=cap)
    page_cache.touch(db, page_cache.get(db, "a"))  # a is used: b is now the oldest
    assert put(db, "d", max_bytes=cap)
    assert [k for k in "abcd" if page_cache.get(db, k)] == ["a", "c", "d"]
    entries, total = page_cache.size(db)
    assert entries == 3 and total == stored_bytes(db) <= cap


def test_what_cannot_be_kept_is_not(db):
    assert not put(db, "off", max_bytes=0)  # the cache is off
    assert not put(db, "huge", max_bytes=1000)  # larger than a tenth of the cap
    assert page_cache.size(db) == (0, 0)


def test_a_304_makes_the_entry_fetched_now(db):
    assert page_cache.put(db, "v", operation="scrape", url="https://a.test/", result=RESULT,
                          max_bytes=10**9, etag='"abc"', last_modified="Wed, 25 Nov 2026")
    with db.session() as session:  # as if it were an hour old
        entry = session.get(PageCacheEntry, "v")
        entry.cached_at -= timedelta(hours=1)
    assert page_cache.get(db, "v").age() > 3000
    refreshed = page_cache.refresh(db, "v")
    assert refreshed is not None and refreshed.age() < 60
    assert (refreshed.etag, refreshed.last_modified) == ('"abc"', "Wed, 25 Nov 2026")
    assert page_cache.refresh(db, "gone") is None
