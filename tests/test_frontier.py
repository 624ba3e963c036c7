"""The collections' frontier on a real Redis: admission is exact under races, a lease that
expires goes back, a duplicate gives its budget slot to the next URL in line.

It is the one implementation of these rules: the workers' slices lease from it, and ``scrapy
crawl site|batch`` takes from it (:meth:`Frontier.take`), on a Redis of their own
(:class:`PrivateRedis`, tested last); ``tests/test_spiders_site_batch.py`` checks that such a
crawl stores what the API stores."""

from __future__ import annotations

import os
import threading
import time
import uuid

import pytest
from redis import Redis

from collecting.frontier import Entry, Frontier, Skip, links_followed, page_addresses, sort_links
from collecting.private_redis import PrivateRedis
from core.scope import CrawlScope
from tests.conftest import _redis_db

#: A Redis database of this module's own (see the offsets in the other modules).
DB_OFFSET = 8


@pytest.fixture
def frontier(redis_url) -> Frontier:
    return Frontier(Redis.from_url(_redis_db(redis_url, DB_OFFSET)), f"col_{uuid.uuid4().hex}")


def entries(*paths: str, depth: int = 0) -> list[Entry]:
    return [Entry(f"http://site.test{p}", f"http://site.test{p}", depth) for p in paths]


def test_each_url_is_admitted_once(frontier):
    assert frontier.admit(entries("/a", "/b", "/a")) == 2
    assert frontier.admit(entries("/b", "/c")) == 1
    taken = frontier.lease(10, 30)
    assert [e.url.rsplit("/", 1)[1] for e in taken] == ["a", "b", "c"]
    assert frontier.state().admitted == 3


def test_the_budget_is_exact_under_a_race(frontier):
    """Eight writers admit 50 URLs each, overlapping: exactly the budget gets in."""
    def admit(n: int) -> None:
        frontier.admit(entries(*(f"/p{i}" for i in range(n * 10, n * 10 + 50))), budget=37)

    threads = [threading.Thread(target=admit, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    state = frontier.state()
    assert (state.queued, state.admitted) == (37, 37)
    assert len({e.key for e in frontier.lease(100, 30)}) == 37


def test_a_lease_is_held_renewed_acknowledged_or_given_back(frontier):
    frontier.admit(entries("/a", "/b"))
    first = frontier.lease(1, 0.3)
    assert [e.url for e in first] == ["http://site.test/a"]
    second = frontier.lease(1, 30)
    assert [e.url for e in second] == ["http://site.test/b"]
    assert frontier.lease(5, 30) == []  # /a is leased still
    time.sleep(0.4)
    again = frontier.lease(5, 30)  # /a's lease expired: its worker died
    assert again == first
    frontier.ack(again + second)
    state = frontier.state()
    assert (state.queued, state.leased, state.idle) == (0, 0, True)


def test_renewing_keeps_a_lease(frontier):
    frontier.admit(entries("/a"))
    taken = frontier.lease(1, 0.3)
    for _ in range(3):
        time.sleep(0.15)
        frontier.renew(taken, 0.3)
    assert frontier.lease(1, 30) == []
    assert frontier.state().leased == 1


def test_a_duplicate_gives_its_slot_to_the_next_url(frontier):
    """Budget 2: /a and /b admitted, /c waits. /b turns out to redirect to /a's address:
    it is a duplicate, and /c takes its slot."""
    frontier.admit(entries("/a", "/b", "/c"), budget=2)
    a, b = frontier.lease(2, 30)
    assert frontier.claim(a, ["http://site.test/a"]) is None
    assert frontier.claim(a, ["http://site.test/a"]) is None  # its own retry: no duplicate
    assert frontier.claim(b, ["http://site.test/a"]) == "http://site.test/a"
    frontier.ack([a, b])
    assert [e.url for e in frontier.lease(5, 30)] == ["http://site.test/c"]
    state = frontier.state()
    assert (state.admitted, state.duplicates) == (2, 1)


def test_a_duplicate_without_a_successor_shrinks_the_total(frontier):
    frontier.admit(entries("/a", "/b"))
    a, b = frontier.lease(2, 30)
    frontier.claim(a, ["http://site.test/x"])
    assert frontier.claim(b, ["http://site.test/x"]) == "http://site.test/a"
    assert frontier.state().total == 1


def test_flags_are_set_once(frontier):
    assert frontier.mark("seeded") is True
    assert frontier.mark("seeded") is False
    assert frontier.state().seeded and not frontier.state().cancelled


# --- taken for good, as scrapy crawl site|batch takes them --------------------------------


def entry(url: str, depth: int = 1) -> Entry:
    return Entry.of(url, depth)


def test_a_page_is_admitted_once_whatever_its_spelling(frontier):
    assert frontier.admit([entry("https://a.example/x?b=2&a=1"),
                           entry("https://A.example:443/x?a=1&b=2&utm_source=m#top")]) == 1
    assert frontier.admit([entry("https://a.example/x?a=1&b=2")]) == 0
    assert [e.url for e in frontier.take()] == ["https://a.example/x?b=2&a=1"]
    assert frontier.take() == []
    state = frontier.state()
    assert (state.queued, state.leased, state.admitted) == (0, 0, 1)  # taken: no lease left


def test_taking_respects_the_budget(frontier):
    start, a, b = (entry(f"https://s.example/{p}") for p in ("", "a", "b"))
    assert frontier.admit([start, a, b], budget=2) == 2
    assert frontier.take() == [start, a]
    assert frontier.claim(start, []) is None and frontier.claim(a, []) is None
    assert frontier.take() == [] and frontier.state().admitted == 2  # b waits: budget spent


def test_a_duplicate_gives_its_slot_to_the_next_in_line_to_take(frontier):
    start, moved, a, b = (entry(f"https://s.example/{p}") for p in ("", "m", "a", "b"))
    assert frontier.admit([start, moved, b], budget=2) == 2
    frontier.take()
    assert frontier.claim(start, [a.key]) is None  # start redirected to a: start owns a
    assert frontier.claim(moved, [a.key]) == start.key  # moved → a as well: a duplicate
    assert frontier.take() == [b] and frontier.state().duplicates == 1
    assert frontier.state().admitted == 2


def test_a_duplicate_with_nobody_waiting_frees_its_slot(frontier):
    start, moved, later = (entry(f"https://s.example/{p}") for p in ("", "m", "l"))
    frontier.admit([start, moved], budget=2)
    frontier.take()
    frontier.claim(start, [])
    assert frontier.claim(moved, [start.key]) == start.key
    assert frontier.state().admitted == 1
    assert frontier.admit([later], budget=2) == 1 and frontier.take() == [later]


def test_a_page_may_claim_its_own_addresses_again(frontier):
    page = entry("https://s.example/a")
    frontier.admit([page])
    assert frontier.claim(page, [page.key, "https://s.example/a-canonical"]) is None
    assert frontier.claim(page, ["https://s.example/a-canonical"]) is None


def test_what_a_page_claims_and_which_links_enter():
    assert page_addresses("https://s.example/a?b=1&a=2#x", None) == ["https://s.example/a?a=2&b=1"]
    assert page_addresses(None, "https://S.example/c") == ["https://s.example/c"]
    scope = CrawlScope(start_url="https://s.example/", max_depth=2,
                       exclude_paths=("^/private",))
    links = ["https://s.example/a?utm_source=m", "https://other.example/",
             "https://s.example/private/x", "https://www.s.example/b"]
    assert links_followed(scope, links, 2) == [
        Entry("https://s.example/a?utm_source=m", "https://s.example/a", 2),
        Entry("https://www.s.example/b", "https://www.s.example/b", 2)]
    assert links_followed(scope, links, 3) == []  # past max_depth


def test_links_refused_say_why():
    scope = CrawlScope(start_url="https://s.example/", max_depth=1,
                       include_paths=("^/(docs|private)",), exclude_paths=("^/private",))
    links = ["https://other.example/docs", "https://s.example/blog", "https://s.example/private",
             "https://s.example/docs/a", "https://s.example/docs/b?utm_source=x",
             "https://s.example/"]
    followed, refused = sort_links(scope, links, 2)
    assert [e.url for e in followed] == ["https://s.example/"]  # the start, at any depth
    assert [(s.key, s.reason) for s in refused] == [
        ("https://other.example/docs", "off_site"), ("https://s.example/blog", "not_included"),
        ("https://s.example/private", "excluded_path"), ("https://s.example/docs/a", "depth"),
        ("https://s.example/docs/b", "depth")]
    assert [e.url for e in sort_links(scope, links, 1)[0]] == [
        "https://s.example/docs/a", "https://s.example/docs/b?utm_source=x", "https://s.example/"]


def test_what_would_refuse_the_fetch_comes_before_the_depth():
    """Robots.txt and the policy (known before the fetch) refuse a link for what it is: after
    the scope's own reasons of that kind, before ``depth``; the start URL is asked too."""
    scope = CrawlScope(start_url="https://s.example/", max_depth=1, exclude_paths=("^/x",))
    refusals = {"https://s.example/private": "robots", "https://s.example/deep/private": "robots",
                "https://s.example/x": "robots", "https://www.s.example/": "policy"}
    links = ["https://s.example/a", "https://s.example/private", "https://s.example/x",
             "https://www.s.example/", "https://other.example/private"]
    followed, refused = sort_links(scope, links, 1, refusals.get)
    assert [e.url for e in followed] == ["https://s.example/a"]
    assert [(s.url, s.reason) for s in refused] == [
        ("https://s.example/private", "robots"), ("https://s.example/x", "excluded_path"),
        ("https://www.s.example/", "policy"), ("https://other.example/private", "off_site")]
    _, refused = sort_links(scope, ["https://s.example/deep/private", "https://s.example/b"], 2,
                            refusals.get)
    assert [s.reason for s in refused] == ["robots", "depth"]


def skip(path: str, reason: str, duplicate_of: str | None = None, fetched: bool = False
         ) -> Skip:
    return Skip(f"http://site.test{path}", f"http://site.test{path}", reason, duplicate_of,
                fetched)


def test_a_url_is_skipped_once_and_never_once_admitted(frontier):
    """Each distinct URL refused is a skip once, whoever sees it (eight slices at once); one
    admitted (in the same step or before) is none, unless it is refused after its fetch was
    tried (a duplicate, a robots.txt only read then)."""
    [a] = entries("/a")
    new, skipped = frontier.decide([a], [skip("/a", "depth"), skip("/x", "off_site")])
    assert new == 1 and skipped == [skip("/x", "off_site")]
    decided: list[Skip] = []

    def decide() -> None:
        decided.extend(frontier.decide([], [skip(f"/y{i}", "depth") for i in range(50)])[1])

    threads = [threading.Thread(target=decide) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(s.url for s in decided) == sorted(f"http://site.test/y{i}" for i in range(50))
    assert frontier.decide([], [skip("/x", "depth"), skip("/a", "not_included")]) == (0, [])
    dup = skip("/a", "duplicate", "http://site.test/b", fetched=True)
    assert frontier.decide([], [dup, dup]) == (0, [dup])
    [b] = entries("/b")
    frontier.admit([b])
    assert frontier.decide([], [skip("/b", "robots")]) == (0, [])
    assert frontier.decide([], [skip("/b", "robots", fetched=True)]) == (
        0, [skip("/b", "robots", fetched=True)])


def test_a_page_refused_at_its_fetch_gives_its_slot_to_the_next(frontier):
    """Only pages fetched count toward the budget: a page refused at its fetch gives its slot
    to the first URL past the budget, or back to the budget when none waits."""
    frontier.admit(entries("/a", "/b", "/c"), budget=2)
    assert [e.url for e in frontier.take()] == ["http://site.test/a", "http://site.test/b"]
    frontier.release_slot()
    assert [e.url for e in frontier.take()] == ["http://site.test/c"]
    assert frontier.state().admitted == 2
    frontier.release_slot()
    assert frontier.state().admitted == 1
    assert frontier.admit(entries("/d"), budget=2) == 1


def test_what_is_left_is_drained_once(frontier):
    """At the end every entry left is taken once: past the budget a ``limit`` skip first, then
    the leased and the queued ones, ``cancelled`` (a stop)."""
    frontier.admit(entries("/a", "/b", "/c", "/d", "/e"), budget=3)
    assert [e.url for e in frontier.lease(1, 60)] == ["http://site.test/a"]
    assert frontier.drain(2) == [skip("/d", "limit"), skip("/e", "limit")]
    assert frontier.drain(2) == [skip("/a", "cancelled"), skip("/b", "cancelled")]
    assert frontier.drain(5) == [skip("/c", "cancelled")]
    assert frontier.drain(5) == []
    state = frontier.state()
    assert (state.queued, state.leased, state.idle) == (0, 0, True)


def test_a_private_redis_runs_the_frontier_and_leaves_nothing_behind():
    """``scrapy crawl site|batch``'s Redis: started on demand, gone when closed."""
    redis = PrivateRedis()
    try:
        frontier = Frontier(redis.client, "site")
        assert frontier.admit([entry("https://s.example/")], budget=1) == 1
        assert [e.url for e in frontier.take()] == ["https://s.example/"]
    finally:
        redis.close()
    assert redis.process.poll() is not None
    assert not os.path.exists(redis._directory)
    redis.close()  # again: nothing to do
