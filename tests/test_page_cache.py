"""``max_age`` end to end: API → worker → the loopback site → the page cache in the database.

A fresh enough answer is taken from the cache without a fetch (and without a worker), at the
price of a fetch, marked ``cached`` in the answer and in the history; any account's fetch with
``max_age`` fills it (one without leaves it alone); other options are another entry; a failed
answer, or a page that forbids a shared cache, is never kept; a stale entry is asked for
conditionally, and a 304 refreshes it without a download."""

from __future__ import annotations

import threading
import uuid
from datetime import timedelta

import pytest
from sqlalchemy import update

from core.cache import MAX_AGE, cache_key
from core.operations import operation
from storage import page_cache
from storage.models import utcnow
from storage.page_models import PageCacheEntry
from tests.conftest import new_customer
from tests.support.site import caching
from tests.support.waits import wait_until


def tag() -> str:
    """A path segment of the test's own: the cache outlives a test."""
    return uuid.uuid4().hex[:12]


def scrape(who, url: str, **body) -> dict:
    answer = who.post("/scrape", {"url": url, **body})
    assert answer.status_code == 200, answer.get_json()
    return answer.get_json()


def kept(app, url: str, name: str = "scrape", **options) -> None:
    """Wait until the worker has written the answer for ``url`` (it does just after answering)."""
    extraction = operation(name).extraction
    key = cache_key(name, url, extraction.option_values(options))
    db = app.extensions["webdata.db"]
    wait_until(lambda: page_cache.get(db, key), f"the answer for {url} to be kept")


def test_a_fresh_answer_comes_from_the_cache_at_the_price_of_a_fetch(app, customer, site,
                                                                      site_server):
    url = f"{site}/cache/changing/{tag()}"
    first = scrape(customer, url, max_age=3600)  # nothing kept yet: a fetch, which keeps it
    assert (first["cached"], first["cached_at"]) == (False, None)
    kept(app, url)
    caching.TEXTS[url.split(site, 1)[1]] = "Second version."  # the site changes meanwhile
    other = new_customer(app)  # any account's fetch serves another's request
    hit = scrape(other, url, max_age=3600)
    assert hit["cached"] is True and hit["cached_at"] is not None
    assert hit["text"] == first["text"] and "First version." in hit["text"]
    assert hit["fetched_at"] == first["fetched_at"] and hit["request_id"] != first["request_id"]
    assert hit["credits_used"] == 1 and other.balance() == 99
    assert site_server.requests[url.split(site, 1)[1]] == 1  # fetched once
    line = next(a for a in other.activity() if a["operation"] == "scrape")
    assert (line["cached"], line["credits"], line["status"]) == (True, 1, "succeeded")
    assert not next(a for a in customer.activity() if a["operation"] == "scrape")["cached"]
    fresh = scrape(other, url)  # max_age 0: a fetch, which leaves the cache alone
    assert fresh["cached"] is False and "Second version." in fresh["text"]
    assert "First version." in scrape(customer, url, max_age=3600)["text"]
    assert site_server.requests[url.split(site, 1)[1]] == 2


def test_other_options_are_another_entry_and_the_defaults_spelled_out_the_same(
        app, customer, site, site_server):
    url = f"{site}/cache/changing/{tag()}"
    scrape(customer, url, formats=["text"], max_age=60)
    kept(app, url)
    assert scrape(customer, url, max_age=60)["cached"] is True  # the defaults: the same entry
    markdown = scrape(customer, url, formats=["markdown"], max_age=60)
    assert markdown["cached"] is False and markdown["markdown"]
    contacts = customer.post("/contacts", {"url": url, "max_age": 60}).get_json()
    assert contacts["cached"] is False  # another operation
    kept(app, url, "contacts")
    assert customer.post("/contacts", {"url": url, "max_age": 60}).get_json()["cached"] is True
    assert site_server.requests[url.split(site, 1)[1]] == 3


def test_what_may_not_be_kept_is_fetched_every_time(app, customer, site, site_server):
    private = f"{site}/cache/no-store/{tag()}"
    scrape(customer, private, max_age=3600)
    # the worker's writer keeps answers in order: once a later one is kept, this one would be
    later = f"{site}/cache/changing/{tag()}"
    for worker in range(2):  # whichever of the two workers took it
        scrape(customer, f"{later}/{worker}", max_age=60)
        kept(app, f"{later}/{worker}")
    assert scrape(customer, private, max_age=3600)["cached"] is False
    assert site_server.requests[private.split(site, 1)[1]] == 2
    missing = f"{site}/missing"
    before = site_server.requests["/missing"]
    for _ in range(2):
        refused = customer.post("/scrape", {"url": missing, "max_age": 3600})
        assert refused.status_code == 502 and refused.get_json()["error"] == "target_http_error"
    assert site_server.requests["/missing"] == before + 2
    assert customer.balance() == 96  # the four successes only


def test_a_stale_entry_is_asked_for_conditionally_and_a_304_refreshes_it(app, customer, site,
                                                                         site_server):
    path = f"/cache/etag/{tag()}"
    url = site + path
    first = scrape(customer, url, max_age=60)
    kept(app, url)
    key = cache_key("scrape", url, operation("scrape").extraction.option_values({}))
    db = app.extensions["webdata.db"]
    with db.session() as session:  # as if fetched two hours ago
        assert session.execute(update(PageCacheEntry).where(PageCacheEntry.key == key).values(
            cached_at=utcnow() - timedelta(hours=2))).rowcount == 1
    again = scrape(customer, url, max_age=3600)  # stale: a conditional fetch
    assert caching.NOT_MODIFIED[path] == 1 and site_server.requests[path] == 2
    assert again["cached"] is False and again["fetched_at"] >= first["fetched_at"]
    assert again["text"] == first["text"] and again["status_code"] == 200
    hit = scrape(customer, url, max_age=3600)  # refreshed: fresh again
    assert hit["cached"] is True and site_server.requests[path] == 2
    assert customer.balance() == 97


@pytest.mark.parametrize("value", [-1, MAX_AGE + 1, "1h", 1.5, None, True])
def test_a_max_age_out_of_range_is_a_422_naming_it(customer, site, value):
    answer = customer.post("/scrape", {"url": f"{site}/article", "max_age": value})
    assert answer.status_code == 422 and "max_age" in answer.get_json()["errors"]
    assert customer.balance() == 100


def test_every_page_operation_takes_max_age_and_says_cached(customer, site):
    for path, url in (("/contacts", f"{site}/contact"), ("/products", f"{site}/product"),
                      ("/map", f"{site}/map/start")):
        answer = customer.post(path, {"url": url, "max_age": MAX_AGE})
        assert answer.status_code == 200, (path, answer.get_json())
        assert {"cached", "cached_at"} <= set(answer.get_json()), path


def test_identical_requests_at_once_share_one_fetch(app, site, site_server):
    """20 requests with ``max_age`` for a page nobody has kept, at once: one fetches, the
    others share its answer (cached, as fetched then) instead of a stampede of fetches; each
    is charged and written in the history as usual."""
    who = new_customer(app, credits=100, plan="enterprise")
    path = f"/slow/stampede-{tag()}"
    url = f"{site}{path}?ms=800"
    answers: list[dict] = []

    def ask() -> None:
        client = app.test_client()
        answer = client.post("/api/service/v1/scrape", json={"url": url, "max_age": 600},
                             headers=who.headers)
        answers.append((answer.status_code, answer.get_json()))

    threads = [threading.Thread(target=ask) for _ in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [status for status, _ in answers] == [200] * 20, answers
    assert site_server.requests[path] <= 2
    fetched = [body for _, body in answers if not body["cached"]]
    assert 1 <= len(fetched) <= 2
    assert all(body["cached_at"] == body["fetched_at"] for _, body in answers if body["cached"])
    assert len({body["text"] for _, body in answers}) == 1
    assert who.balance() == 80
    lines = [a for a in who.activity() if a["operation"] == "scrape"]
    assert len(lines) == 20 and sum(a["cached"] for a in lines) == 20 - len(fetched)


def test_a_map_of_a_page_that_forbids_a_shared_cache_is_not_kept(app, customer, site,
                                                                 site_server):
    private = f"{site}/cache/no-store/{tag()}"
    for _ in range(2):
        answer = customer.post("/map", {"url": private, "max_age": 3600, "discover_links": 0})
        assert answer.status_code == 200 and answer.get_json()["cached"] is False
    kept_map = f"{site}/cache/changing/{tag()}"
    customer.post("/map", {"url": kept_map, "max_age": 3600, "discover_links": 0})
    kept(app, kept_map, "map", discover_links=0)  # a page that allows it is kept
    assert site_server.requests[private.split(site, 1)[1]] == 2


def test_a_hit_answers_the_url_as_asked_and_a_tracking_token_never_shares(app, customer, site,
                                                                         site_server):
    """The key is the canonical URL: another spelling of it (its query in another order) is
    a hit, answered with the URL as this request asked it. A URL with a parameter the
    canonical form drops (``utm_*``, ``mc_eid``: one person's token) neither reads nor fills
    the cache: its page may be personalised, and its URL is nobody else's."""
    path = f"/cache/changing/{tag()}"
    first = f"{site}{path}?b=1&a=2"
    scrape(customer, first, max_age=3600)
    kept(app, first)
    again = f"{site}{path}?a=2&b=1"
    hit = scrape(new_customer(app), again, max_age=3600)
    assert hit["cached"] is True and hit["url"] == again
    tracked = f"{site}{path}?a=2&b=1&utm_source=news&mc_eid=SUBSCRIBER"
    for _ in range(2):
        answer = scrape(customer, tracked, max_age=3600)
        assert answer["cached"] is False and answer["url"] == tracked
    assert site_server.requests[path] == 3
    assert scrape(customer, again, max_age=3600)["url"] == again  # the entry is still the first
