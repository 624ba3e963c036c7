"""Collections with ``max_age``: the pages the page cache holds fresh enough are stored from it
without a fetch (and charged as fetched ones), a crawl follows a cached page's links as it
would the fetched page's, and a crawl takes no answer kept without its links (a ``/scrape``'s):
it fetches that page, and keeps it with them."""

from __future__ import annotations

import uuid

from core.cache import cache_key
from core.operations import operation
from storage import page_cache
from tests.support.collection_stack import all_results, wait_final
from tests.support.site import crawlsite
from tests.support.waits import wait_until
from tests.test_collection_skips import all_skipped
from tests.test_collections import _pages, customer, path, start


def tag() -> str:
    return uuid.uuid4().hex[:12]


def pages_fetched(site_server, paths) -> int:
    return sum(site_server.requests[p] for p in paths)


def collected(who, body: dict) -> tuple[dict, list[dict]]:
    final = wait_final(who, start(who, body)["id"])
    assert final["status"] == "completed", (final["stop_reason"], final["progress"])
    return final, all_results(who, final["id"], limit=50)


def kept(stack, urls: list[str]) -> None:
    """Wait until the workers have kept the answers of ``urls`` (just after storing them)."""
    db = stack.app.extensions["webdata.db"]
    options = operation("scrape").extraction.option_values({})
    keys = [cache_key("scrape", url, options) for url in urls]
    wait_until(lambda: len(page_cache.fresh(db, keys, 3600)) == len(keys), "the answers kept")


def test_a_batch_takes_fresh_pages_from_the_cache_and_pays_for_them(stack, site, site_server):
    who = customer(stack)
    paths = [f"/cache/changing/{tag()}" for _ in range(3)]
    urls = [site + p for p in paths]
    first, _ = collected(who, {"mode": "batch", "urls": urls, "max_age": 3600})
    assert pages_fetched(site_server, paths) == 3 and first["credits_used"] == 3
    kept(stack, urls)
    again, results = collected(who, {"mode": "batch", "urls": urls, "max_age": 3600})
    assert pages_fetched(site_server, paths) == 3  # none fetched again
    assert again["credits_used"] == 3 and who.balance() == 94
    assert {r["status"] for r in results} == {"succeeded"}
    assert all("First version." in r["data"]["text"] for r in results)
    fresh, _ = collected(who, {"mode": "batch", "urls": urls})  # no max_age: fetched
    assert pages_fetched(site_server, paths) == 6 and fresh["credits_used"] == 3


def test_a_crawl_from_the_cache_follows_the_same_links(stack, site, site_server):
    who = customer(stack)
    body = {"mode": "crawl", "url": f"{site}/site/", "max_depth": 1, "use_sitemap": False,
            "max_age": 3600}
    site_paths = set(crawlsite.LINKS)
    _, first = collected(who, body)
    assert sorted(_pages(first)) == sorted(crawlsite.STORED[1])

    def second_fetches_none() -> bool:
        before = pages_fetched(site_server, site_paths)
        final, results = collected(who, body)
        assert sorted(_pages(results)) == sorted(crawlsite.STORED[1])
        skipped = {(path(s["url"]), s["reason"]) for s in all_skipped(who, final["id"])}
        assert ("/private/secret", "robots") in skipped and ("/site/a/1", "depth") in skipped
        return pages_fetched(site_server, site_paths) == before

    wait_until(second_fetches_none, "a crawl with every page from the cache")


def test_a_crawl_fetches_a_page_kept_without_its_links(stack, site, site_server):
    who = customer(stack)
    url = f"{site}/cache/changing/{tag()}"
    scraped = who.post("/scrape", {"url": url, "max_age": 3600})
    assert scraped.status_code == 200
    page_path = url.split(site, 1)[1]
    kept(stack, [url])  # the scrape's answer, without links
    before = site_server.requests[page_path]
    _, results = collected(who, {"mode": "crawl", "url": url, "max_depth": 0,
                                 "use_sitemap": False, "max_age": 3600})
    assert [r["status"] for r in results] == ["succeeded"]
    assert site_server.requests[page_path] == before + 1  # the crawl fetched it itself
