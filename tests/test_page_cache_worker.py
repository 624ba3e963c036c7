"""The worker's side of the page cache (``worker.page_cache``), with a stand-in crawl: what it
keeps, how a 304 answers, and what a response's headers say (``response_caching``)."""

from __future__ import annotations

from typing import Any

import pytest
from scrapy.http import HtmlResponse

from core.cache import KEEPING
from core.contract import PageStatus
from core.items import NOT_MODIFIED, PageResult, ResponseCaching
from crawler.spiders.base import response_caching
from storage import page_cache as storage
from storage.db import Database
from worker import page_cache

URL = "https://a.test/p"


@pytest.fixture
def db(sqlite_url, monkeypatch) -> Database:
    db = Database(sqlite_url)
    storage.clear(db)
    monkeypatch.setattr(page_cache, "_settings", lambda: (db, 10**9))
    monkeypatch.setattr(page_cache, "keep_later", lambda put: put() or True)  # at once, here
    return db


def crawl_of(*answers: list[Any]):
    """A crawl answering each call with the next of ``answers``; the arguments it got."""
    calls: list[dict[str, Any]] = []
    remaining = list(answers)

    def crawl(**arguments: Any) -> list[Any]:
        calls.append(arguments)
        return remaining.pop(0)
    return crawl, calls


def page(text: str = "Tides", status_code: int = 200) -> PageResult:
    return PageResult(url=URL, status=PageStatus.SUCCEEDED, final_url=URL,
                      status_code=status_code, data={"text": text})


def test_a_success_the_page_lets_a_cache_keep_is_kept_with_its_validators(db):
    crawl, calls = crawl_of([page(), ResponseCaching(etag='"e"', last_modified="Mon")])
    answer = page_cache.fetch(crawl, {"key": "k1"}, operation="scrape", url=URL)
    assert answer["data"] == {"text": "Tides"} and calls == [{"report_caching": True}]
    entry = storage.get(db, "k1")
    assert {**entry.result, KEEPING: True} == answer
    assert (entry.etag, entry.last_modified) == ('"e"', "Mon")


@pytest.mark.parametrize("items", [
    [page(), ResponseCaching(storable=False)],  # Cache-Control: no-store or private
    [PageResult(url=URL, status=PageStatus.FAILED, error={"error": "timeout"})],
])
def test_what_may_not_be_kept_is_not(db, items):
    crawl, _ = crawl_of(items)
    answer = page_cache.fetch(crawl, {"key": "k2"}, operation="scrape", url=URL)
    assert storage.get(db, "k2") is None and answer[KEEPING] is False  # nobody may share it


def test_a_304_answers_the_cached_answer_fetched_now_and_refreshes_it(db):
    storage.put(db, "k3", operation="scrape", url=URL, result={"data": {"text": "Old"},
                "fetched_at": "2026-11-01T00:00:00Z"}, max_bytes=10**9, etag='"e"')
    crawl, calls = crawl_of([page(status_code=NOT_MODIFIED)])
    answer = page_cache.fetch(crawl, {"key": "k3", "etag": '"e"', "last_modified": None},
                              operation="scrape", url=URL)
    assert calls == [{"report_caching": True, "if_none_match": '"e"'}]
    assert answer["data"] == {"text": "Old"} and answer["fetched_at"] > "2026-11-01T00:00:00Z"
    assert answer[KEEPING] is True


def test_a_304_for_an_entry_evicted_meanwhile_fetches_the_page_whole(db):
    crawl, calls = crawl_of([page(status_code=NOT_MODIFIED)], [page("New"), ResponseCaching()])
    answer = page_cache.fetch(crawl, {"key": "gone", "last_modified": "Mon"},
                              operation="scrape", url=URL)
    assert answer["data"] == {"text": "New"}
    assert calls == [{"report_caching": True, "if_modified_since": "Mon"},
                     {"report_caching": True}]
    assert {**storage.get(db, "gone").result, KEEPING: True} == answer


@pytest.mark.parametrize(("cache_control", "storable"), [
    (None, True), (b"public, max-age=60", True), (b"no-store", False),
    (b"Private, max-age=0", False), (b"max-age=0, NO-STORE", False), (b"no-cache", True)])
def test_a_response_says_whether_a_shared_cache_may_keep_it(cache_control, storable):
    headers = {"ETag": '"v2"', "Last-Modified": "Wed, 25 Nov 2026 10:00:00 GMT"}
    if cache_control:
        headers["Cache-Control"] = cache_control.decode()
    caching = response_caching(HtmlResponse(URL, body=b"<p>x</p>", headers=headers))
    assert caching == ResponseCaching(storable=storable, etag='"v2"',
                                      last_modified="Wed, 25 Nov 2026 10:00:00 GMT")


def test_a_304_that_forbids_a_shared_cache_drops_the_entry_and_new_validators_are_kept(db):
    storage.put(db, "k5", operation="scrape", url=URL, result={"data": {"text": "Old"}},
                max_bytes=10**9, etag='"e"')
    crawl, _ = crawl_of([page(status_code=NOT_MODIFIED), ResponseCaching(etag='"e2"')])
    page_cache.fetch(crawl, {"key": "k5", "etag": '"e"'}, operation="scrape", url=URL)
    assert storage.get(db, "k5").etag == '"e2"'  # the 304's own validators from now on
    crawl, _ = crawl_of([page(status_code=NOT_MODIFIED), ResponseCaching(storable=False)])
    answer = page_cache.fetch(crawl, {"key": "k5", "etag": '"e2"'}, operation="scrape",
                              url=URL)
    assert answer["data"] == {"text": "Old"} and answer[KEEPING] is False
    assert storage.get(db, "k5") is None and storage.size(db) == (0, 0)
