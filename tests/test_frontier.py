"""The shared frontier on a real Redis: admission is exact under races, a lease that expires
goes back, a duplicate gives its budget slot to the next URL in line."""

from __future__ import annotations

import threading
import time
import uuid

import pytest
from redis import Redis

from collecting.frontier import Entry, Frontier
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
