"""POST /map end to end: API → RQ → warm worker → real crawls of a loopback site whose robots.txt
names a sitemap index of good and hostile sitemaps (tests/support/site/maps.py)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from tests.conftest import SITE_HOST
from tests.support.site.maps import (
    FROM_FEED,
    FROM_HOPS,
    FROM_PAGES,
    FROM_SECOND_HOP,
    FROM_SITEMAPS,
    NEVER,
)
from tests.support.site.server import HitCounter, Server, serve

#: The shared site's own robots.txt sitemap (tests/support/site/sitemaps.py), read too.
NEWS = ("/news/1", "/news/2", "/article")


@pytest.fixture(scope="module")
def hits() -> HitCounter:
    return HitCounter()


@pytest.fixture(scope="module")
def map_server(hits: HitCounter) -> Iterator[Server]:
    server = serve()
    port = server.server_address[1]
    server.RequestHandlerClass.robots_extra = (  # type: ignore[attr-defined]
        f"Sitemap: http://{SITE_HOST}:{port}/map/index.xml?hit={hits.port}\n"
        # robots.txt may name a sitemap of another host: a private address's is still refused
        f"Sitemap: http://127.0.0.1:{hits.port}/sitemap.xml\n")
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def base(map_server: Server) -> str:
    return f"http://{SITE_HOST}:{map_server.server_address[1]}"


def urls(base: str, *groups: tuple[str, ...]) -> set[str]:
    return {base + path for group in groups for path in group}


def mapped(customer, base: str, **options) -> dict:
    response = customer.post("/map", {"url": f"{base}/map/start", **options})
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def test_a_map_lists_sitemaps_feeds_and_links_once_and_costs_one_credit(
        customer, base, map_server, hits):
    started, before = time.monotonic(), dict(map_server.requests)
    body = mapped(customer, base)
    assert time.monotonic() - started < 8  # the slow sitemap costs its download timeout only
    found = {link["url"]: link for link in body["links"]}
    assert set(found) == urls(base, FROM_PAGES, FROM_HOPS, FROM_FEED, FROM_SITEMAPS, NEWS)
    assert len(body["links"]) == len(found) == body["total_found"]
    assert body["truncated"] is False
    assert not set(found) & urls(base, NEVER, FROM_SECOND_HOP)
    # canonical, each once; the first source wins, a later one fills what it lacked
    assert found[f"{base}/map/private-link"]["source"] == "page"
    assert found[f"{base}/map/a"] == {"url": f"{base}/map/a", "title": "Alpha tide guide",
                                      "lastmod": "2026-01-02", "source": "page"}
    assert found[f"{base}/map/tides-2026"]["lastmod"] == "2026-03-04"
    assert found[f"{base}/map/tides-2026"]["source"] == "sitemap"
    assert found[f"{base}/map/post/1"]["title"] == "First tide post"
    assert found[f"{base}/map/post/1"]["source"] == "feed"
    assert body["feeds"] == [f"{base}/map/feed.rss"]
    read = set(body["sitemaps"])
    assert f"{base}/map/pages.xml.gz" in read and f"{base}/map/level-deep.xml" in read
    assert f"{base}/map/level4.xml" not in read  # index depth <= 3
    # the index names itself: read once; an index at depth 3 is not followed
    assert map_server.requests["/map/index.xml"] - before.get("/map/index.xml", 0) == 1
    assert map_server.requests["/map/level4.xml"] == 0
    assert hits.hits == 0  # other hosts and private addresses: never fetched
    assert body["credits_used"] == 1 and body["final_url"] == f"{base}/map/start"
    assert body["status_code"] == 200 and body["fetched_at"].endswith("Z")
    assert customer.balance() == 99
    assert customer.activity()[0]["operation"] == "map"


def test_limit_is_exact_and_says_truncated(customer, base):
    body = mapped(customer, base, limit=3)
    assert len(body["links"]) == 3
    assert body["truncated"] is True and body["total_found"] > 3


def test_search_ranks_the_best_matches_first(customer, base):
    body = mapped(customer, base, search="tide")
    ranked = [link["url"] for link in body["links"]]
    # path word (2) + title word (2) before path word alone, title word alone
    assert ranked[0] == f"{base}/map/a"
    assert set(ranked) == {f"{base}/map/a", f"{base}/map/tides-2026", f"{base}/map/post/1"}
    assert body["total_found"] == 3


def test_sitemap_only_and_skip(customer, base):
    only = {link["source"] for link in mapped(customer, base, sitemap="only")["links"]}
    assert only == {"sitemap"}
    skipped = mapped(customer, base, sitemap="skip")
    assert skipped["sitemaps"] == []
    assert {link["source"] for link in skipped["links"]} == {"page", "feed"}


def test_an_atom_feed_gives_its_entries_with_their_titles(customer, base):
    from tests.support.site.maps import FROM_ATOM

    response = customer.post("/map", {"url": f"{base}/map/atom-start", "sitemap": "skip",
                                      "discover_links": 0})
    assert response.status_code == 200, response.get_json()
    body = response.get_json()
    assert body["feeds"] == [f"{base}/map/feed.atom"]
    feed = {link["url"]: link for link in body["links"] if link["source"] == "feed"}
    assert set(feed) == urls(base, FROM_ATOM)
    assert feed[f"{base}/map/atom/1"]["title"] == "Atom entry 1"


def test_discover_links_and_path_rules(customer, base):
    none = {link["url"] for link in mapped(customer, base, discover_links=0,
                                               sitemap="skip")["links"]}
    assert none == urls(base, FROM_PAGES, FROM_FEED)
    two = {link["url"] for link in mapped(customer, base, discover_links=2,
                                              sitemap="skip")["links"]}
    assert urls(base, FROM_SECOND_HOP) <= two
    ruled = mapped(customer, base, include_paths=["^/map/"], exclude_paths=["^/map/post/",
                                                                            "hop"])
    listed = {link["url"] for link in ruled["links"]}
    assert listed and all(url.startswith(f"{base}/map/") for url in listed)
    assert not any("/map/post/" in url or "hop" in url for url in listed)
    assert f"{base}/map/deep1" not in listed  # an excluded page is not a hop either


@pytest.mark.parametrize(("field", "value"), [
    ("limit", 0), ("limit", 100_001), ("limit", "5"), ("discover_links", 3),
    ("sitemap", "all"), ("include_paths", ["(unclosed"]), ("exclude_paths", [r"(a)\1"]),
    ("search", "x" * 201),
])
def test_bad_options_are_422_naming_them(customer, base, field, value):
    response = customer.post("/map", {"url": f"{base}/map/start", field: value})
    body = response.get_json()
    assert response.status_code == 422, body
    assert body["error"] == "validation_error" and field in body["errors"]
    assert customer.balance() == 100


def test_a_limit_over_the_plan_is_422_naming_limit(customer, base):
    response = customer.post("/map", {"url": f"{base}/map/start", "limit": 5001})
    body = response.get_json()
    assert response.status_code == 422, body
    assert body["errors"] == {"limit": ["At most 5000 on your plan (max_map_urls)."]}
    assert customer.balance() == 100
    assert customer.activity()[0]["status"] == "failed"


def test_a_start_page_that_fails_fails_the_map_for_free(customer, base):
    response = customer.post("/map", {"url": f"{base}/private"})
    assert response.status_code == 403, response.get_json()
    assert response.get_json()["error"] == "robots_disallowed"
    assert customer.balance() == 100


def test_the_account_shows_the_plan_cap(customer):
    plan = customer.get("/account").get_json()["plan"]
    assert plan["max_map_urls"] == 5000
