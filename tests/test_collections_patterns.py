"""A crawl's ``include_paths``/``exclude_paths`` are users' regexes, run by the workers every
crawl shares: a catastrophic pattern must cost its crawl nothing more than a plain one, and
another account's requests nothing at all (core/patterns.py: RE2, linear time).

The attack as it was reported: ``(a+)+$`` over a page that links to ``/aaa…a!``, sent twice,
held both workers (Python's ``re`` backtracking with the GIL held, past any budget or job
timeout) while another account's ``/scrape`` waited, then got a 504.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from tests.conftest import Customer, new_customer
from tests.support.collection_stack import Stack, all_results, wait_final
from tests.support.site.server import REDOS_LINKS
from tests.support.waits import wait_until

HOSTILE = "(a+)+$"


def customer(stack: Stack) -> Customer:
    return new_customer(stack.app, credits=100, plan="standard")


def test_a_catastrophic_pattern_holds_no_worker(stack, site, site_server):
    attacker, other = customer(stack), customer(stack)
    fetched = site_server.requests["/redos"]
    crawls = []
    for _ in range(2):  # as many as the workers
        answer = attacker.post("/collections", {
            "mode": "crawl", "url": f"{site}/redos", "include_paths": [HOSTILE],
            "max_pages": 5, "use_sitemap": False})
        assert answer.status_code == 202, answer.get_json()
        crawls.append(answer.get_json()["id"])
    wait_until(lambda: site_server.requests["/redos"] >= fetched + len(crawls),
               "both crawls to fetch their start page", timeout=60)
    # The links reach the workers' scope now. The other account's page takes 1.5 s to answer:
    # its job is on the same workers while they judge them. Before RE2, re.search held each
    # worker's GIL from then on, and this request waited the API's 30 s, then was a 504.
    scrape = other.post("/scrape", {"url": f"{site}/slow/other-account?ms=1500"})
    assert scrape.status_code == 200, scrape.get_json()
    assert scrape.get_json()["title"]
    for crawl in crawls:
        # Bounded: without the fix these slices would run for hours, and the test fail here.
        final = wait_final(attacker, crawl, timeout=120)
        assert final["status"] == "completed", final
        pages = {urlsplit(r["url"]).path for r in all_results(attacker, crawl)}
        assert pages == {"/redos", "/redos/aaa"}  # the pattern still filters the links
    hostile = [urlsplit(link).path for link in REDOS_LINKS if link.endswith("!")]
    assert all(site_server.requests[path] == 0 for path in hostile)


def test_a_pattern_re2_refuses_is_a_422_naming_it(stack, site):
    """Backreferences and lookarounds need backtracking: refused before anything runs, with
    the syntax that is accepted, never a 500 or a crawl that fails later."""
    who = customer(stack)
    answer = who.post("/collections", {
        "mode": "crawl", "url": f"{site}/site/", "include_paths": ["^/ok/", r"(a)\1"],
        "exclude_paths": ["(?=x)", r"\?print=", "(?<!a)b"]})
    assert answer.status_code == 422, answer.get_json()
    errors = answer.get_json()["errors"]
    assert set(errors["include_paths"]) == {"1"}
    assert set(errors["exclude_paths"]) == {"0", "2"}
    [message] = errors["include_paths"]["1"]
    assert "invalid escape sequence: \\1" in message
    assert "RE2 syntax" in message and "https://github.com/google/re2/wiki/Syntax" in message
    assert "invalid perl operator: (?=" in errors["exclude_paths"]["0"][0]
    assert who.get("/collections").get_json()["collections"] == []
    assert who.balance() == 100
