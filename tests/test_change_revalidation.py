"""Change tracking revalidates (collecting.page_cache): a tracked collection, even with
``max_age`` 0, keeps its pages in the page cache and fetches a page the cache holds
conditionally; a 304 stores the cached answer as fetched now, so the page is ``same``; a crawl
follows a 304 page's links from the cache, and fetches a page whose entry has none again,
whole. Without a cache (``CACHE_MAX_BYTES=0``) nothing is conditional."""

from __future__ import annotations

import uuid

import pytest

from core.cache import cache_key
from core.operations import operation
from storage import page_cache
from tests.support.collection_stack import Stack, all_results, wait_final
from tests.support.site import caching, changing
from tests.support.site.changing import Page, publish
from tests.test_collection_cache import kept
from tests.test_collections import customer, path, start


def tag() -> str:
    return uuid.uuid4().hex[:12]


def tracked(who, body: dict, tag_: str) -> tuple[dict, dict[str, dict]]:
    final = wait_final(who, start(who, {**body, "change_tracking": {"tag": tag_}})["id"])
    assert final["status"] == "completed", (final["stop_reason"], final["progress"])
    return final, {path(r["url"]): r for r in all_results(who, final["id"], limit=50)}


def test_a_tracked_batch_revalidates_and_a_304_is_the_same_page(stack, site):
    who, name = customer(stack), tag()
    paths = [f"/cache/etag/{name}-{n}" for n in range(2)] + [f"/cache/changing/{name}"]
    urls = [site + p for p in paths]
    first, before = tracked(who, {"mode": "batch", "urls": urls}, name)  # max_age 0
    assert first["progress"]["changes"]["new"] == 3
    kept(stack, urls)  # a tracked collection keeps its pages, whatever its max_age
    second, after = tracked(who, {"mode": "batch", "urls": urls}, name)
    assert [caching.NOT_MODIFIED[p] for p in paths] == [1, 1, 0]  # no validators: whole
    assert second["progress"]["changes"] == {"new": 0, "same": 3, "changed": 0, "removed": 0}
    for p in paths:
        assert after[p]["change"]["previous_fetched_at"] == before[p]["fetched_at"]
        assert after[p]["data"] == before[p]["data"] and after[p]["status_code"] == 200
        assert after[p]["fetched_at"] >= before[p]["fetched_at"]
    assert first["credits_used"] == second["credits_used"] == 3  # a 304 is a stored page


def test_a_tracked_crawl_follows_a_304_page_s_links_from_the_cache(stack, site, site_server):
    who, name = customer(stack), tag()
    pages = publish(name, {"": Page("The index.", ("a", "b")), "a": Page("A page."),
                           "b": Page("A page with a tag.", ("b1",), etag='"b1"'),
                           "b1": Page("Found only through b.")})
    body = {"mode": "crawl", "url": f"{site}{pages['']}", "use_sitemap": False}
    first, _ = tracked(who, body, name)
    assert first["progress"]["changes"]["new"] == 4
    kept(stack, [site + p for p in pages.values()])
    second, after = tracked(who, body, name)
    assert changing.NOT_MODIFIED[pages["b"]] == 1 and site_server.requests[pages["b"]] == 2
    assert set(after) == set(pages.values())  # b1: b's links, read from its cached answer
    assert second["progress"]["changes"] == {"new": 0, "same": 4, "changed": 0, "removed": 0}
    # b's answer kept without its links (as /scrape keeps it): its 304 is fetched again whole
    db = stack.app.extensions["webdata.db"]
    key = cache_key("scrape", site + pages["b"], operation("scrape").extraction.option_values({}))
    entry = page_cache.get(db, key)
    assert "follow" in entry.result
    page_cache.put(db, key, operation="scrape", url=entry.result["url"], max_bytes=10**9,
                   result={k: v for k, v in entry.result.items() if k != "follow"},
                   etag=entry.etag)
    third, again = tracked(who, body, name)
    assert changing.NOT_MODIFIED[pages["b"]] == 2 and site_server.requests[pages["b"]] == 4
    assert set(again) == set(pages.values())
    assert third["progress"]["changes"]["same"] == 4


@pytest.fixture
def uncached(tmp_path, sqlite_url, site):
    """A stack whose worker keeps no page cache (``CACHE_MAX_BYTES=0``)."""
    stack = Stack(tmp_path, sqlite_url, site, workers=0)
    stack.env["CACHE_MAX_BYTES"] = "0"
    stack.start_workers(1)
    yield stack
    stack.close()


def test_without_a_cache_nothing_is_conditional(uncached, site):
    who, name = customer(uncached), tag()
    url = f"{site}/cache/etag/{name}"
    tracked(who, {"mode": "batch", "urls": [url]}, name)
    second, results = tracked(who, {"mode": "batch", "urls": [url]}, name)
    assert caching.NOT_MODIFIED[f"/cache/etag/{name}"] == 0
    assert second["progress"]["changes"]["same"] == 1
    assert results[f"/cache/etag/{name}"]["data"]["title"] == "Kept with validators"
