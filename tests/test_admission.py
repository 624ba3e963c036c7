"""Admission: the frontier's rules in one process (``scrapy crawl site`` and ``batch``)."""

from __future__ import annotations

from collecting.frontier import Entry
from core.canonical import canonical_url
from crawler.admission import Admission


def entry(url: str, depth: int = 1) -> Entry:
    return Entry(url, canonical_url(url), depth)


def test_a_page_is_admitted_once_whatever_its_spelling():
    admission = Admission()
    assert admission.admit([entry("https://a.example/x?b=2&a=1"),
                            entry("https://A.example:443/x?a=1&b=2&utm_source=m#top")]) == 1
    assert admission.admit([entry("https://a.example/x?a=1&b=2")]) == 0
    assert [e.url for e in admission.take()] == ["https://a.example/x?b=2&a=1"]
    assert admission.take() == []


def test_the_budget_is_exact():
    admission = Admission(budget=2)
    start, a, b = (entry(f"https://s.example/{p}") for p in ("", "a", "b"))
    assert admission.admit([start, a, b]) == 2
    assert admission.take() == [start, a]
    assert admission.claim(start, []) is None and admission.claim(a, []) is None
    assert admission.take() == [] and admission.admitted == 2  # b waits: the budget is spent


def test_a_duplicate_gives_its_slot_to_the_next_in_line():
    admission = Admission(budget=2)
    start, moved, a, b = (entry(f"https://s.example/{p}") for p in ("", "m", "a", "b"))
    assert admission.admit([start, moved, b]) == 2
    admission.take()
    assert admission.claim(start, [a.key]) is None  # start redirected to a: start owns a
    assert admission.claim(moved, [a.key]) == start.key  # moved → a as well: a duplicate
    assert admission.take() == [b] and admission.duplicates == 1
    assert admission.admitted == 2


def test_a_duplicate_with_nobody_waiting_frees_its_slot():
    admission = Admission(budget=2)
    start, moved, later = (entry(f"https://s.example/{p}") for p in ("", "m", "l"))
    admission.admit([start, moved])
    admission.take()
    admission.claim(start, [])
    assert admission.claim(moved, [start.key]) == start.key
    assert admission.admitted == 1
    assert admission.admit([later]) == 1 and admission.take() == [later]


def test_a_page_may_claim_its_own_addresses_again():
    admission = Admission()
    page = entry("https://s.example/a")
    admission.admit([page])
    assert admission.claim(page, [page.key, "https://s.example/a-canonical"]) is None
    assert admission.claim(page, ["https://s.example/a-canonical"]) is None
