"""Blocks a crawl's pages repeat: found by fingerprint in every format (pure), counted across
slices in Redis, removed from each page as it is stored and, once the crawl completes, from
the pages stored before a block was recognised."""

from __future__ import annotations

import pytest
from redis import Redis

from collecting.frontier import Frontier
from collecting.repeats import (
    MIN_PAGES,
    SAMPLE,
    WARMUP,
    RepeatedBlocks,
    clean_stored,
    count_pages,
    repeated_in,
    threshold,
)
from crawler.extract.repeated import fingerprint, page_units, without_repeated
from tests.conftest import new_customer
from tests.support.collection_stack import all_results, wait_final

NOTICE = "We use cookies to make this site work. Accept them or leave."
DATA = {
    "title": "A page",
    "text": f"A page\n\nIts own words, found nowhere else.\n\n{NOTICE}\n\n- Home",
    "markdown": f"# A page\n\nIts own words, found nowhere else.\n\n{NOTICE}\n\n- Home\n\n"
                f"```\n{NOTICE}\n```",
    "html": f"<h1>A page</h1>\n<p>Its own words, found nowhere else.</p>\n<p>{NOTICE}</p>\n"
            "<ul><li>Home</li></ul>",
    "raw_html": f"<p>{NOTICE}</p>",
}


def test_a_block_has_one_fingerprint_in_every_format():
    units = page_units(DATA)
    assert fingerprint(NOTICE) in units
    assert fingerprint(f"  {NOTICE}\n") == fingerprint(NOTICE)  # whitespace squeezed
    assert fingerprint("Its own words, found nowhere else.") in units


def test_repeated_blocks_leave_every_format_but_code_and_the_raw_page():
    cleaned = without_repeated(DATA, {fingerprint(NOTICE), fingerprint("Home"),
                                      fingerprint("- Home")})
    assert cleaned["text"] == "A page\n\nIts own words, found nowhere else."
    assert cleaned["markdown"] == (f"# A page\n\nIts own words, found nowhere else.\n\n"
                                   f"```\n{NOTICE}\n```")  # code is never a template's
    assert cleaned["html"] == "<h1>A page</h1>\n<p>Its own words, found nowhere else.</p>"
    assert cleaned["raw_html"] == DATA["raw_html"] and cleaned["title"] == "A page"
    assert DATA["text"].count(NOTICE) == 1  # the page's data itself is left as it was


def test_nothing_repeated_gives_the_same_data():
    assert without_repeated(DATA, {fingerprint("not on the page")}) is DATA
    assert without_repeated(None, {fingerprint(NOTICE)}) is None


def test_a_page_made_only_of_repeated_blocks_is_empty_not_an_error():
    data = {"text": NOTICE, "markdown": NOTICE, "html": f"<p>{NOTICE}</p>"}
    assert without_repeated(data, {fingerprint(NOTICE)}) == {
        "text": None, "markdown": None, "html": None}


def test_the_threshold():
    assert threshold(1) == MIN_PAGES and threshold(100) == 50 and threshold(101) == 51


def test_counts_across_slices_and_a_bounded_sample(redis_url):
    redis = Redis.from_url(redis_url)
    frontier = Frontier(redis, "col_repeats_test")
    redis.delete(frontier.keys["blocks"])
    first, second = RepeatedBlocks(redis, frontier), RepeatedBlocks(redis, frontier)
    assert first.count([{"notice", "a"}, {"notice", "b"}]) == set()
    assert second.count([{"notice", "c"}, {"notice", "d"}]) == set()  # 4 of 4: warming up
    assert first.repeated() == {"notice"}  # what the end of the crawl cleans with
    pages = [{"notice", f"warm-{page}"} for page in range(WARMUP - 4)]
    assert first.count(pages) == {"notice"}  # cleaned as stored from the WARMUP-th page
    for page in range(SAMPLE):  # past the sample, a new block is not counted at all
        first.count([{"notice", f"page-{page}"}])
    first.count([{"notice", "late"}] * 10)
    assert not redis.hexists(frontier.keys["blocks"], "late")
    assert redis.hlen(frontier.keys["blocks"]) <= SAMPLE + 10
    redis.delete(frontier.keys["blocks"])


def test_the_scripts_python_twin_counts_the_same(redis_url):
    """count_pages (the bench's counting, without Redis) is the Lua script in Python."""
    redis = Redis.from_url(redis_url)
    frontier = Frontier(redis, "col_repeats_twin")
    redis.delete(frontier.keys["blocks"])
    blocks, counts = RepeatedBlocks(redis, frontier), {}
    pages = [{"notice", f"own-{page}", f"section-{page % 3}"}
             | ({"late"} if page > SAMPLE else set()) for page in range(SAMPLE + 20)]
    for start in range(0, len(pages), 7):
        assert blocks.count(pages[start:start + 7]) == (
            count_pages(counts, pages[start:start + 7]) or repeated_in(counts, warmup=WARMUP))
    assert {field.decode(): int(value) for field, value in
            redis.hgetall(frontier.keys["blocks"]).items()} == counts
    assert "late" not in counts and repeated_in(counts) == {"notice"}
    redis.delete(frontier.keys["blocks"])


@pytest.mark.parametrize("remove", [True, False])
def test_a_crawl_drops_the_paragraph_every_page_repeats(stack, site, remove):
    """Every page of the test site's /site/ carries the same paragraph ("Words of the
    page."): removed from every stored page, the first ones included, unless asked not to."""
    who = new_customer(stack.app, credits=100, plan="standard")
    created = who.post("/collections", {
        "mode": "crawl", "url": f"{site}/site/", "max_depth": 4, "use_sitemap": False,
        "formats": ["text", "markdown", "html"], "remove_repeated_blocks": remove})
    assert created.status_code == 202, created.get_json()
    assert wait_final(who, created.get_json()["id"])["status"] == "completed"
    pages = [r["data"] for r in all_results(who, created.get_json()["id"], limit=50)
             if r["status"] == "succeeded"]
    assert len(pages) >= MIN_PAGES
    for data in pages:
        for name in ("text", "markdown", "html"):
            assert ("Words of the page." in (data[name] or "")) is not remove, (name, data)


def test_a_page_of_100000_lines_counts_a_bounded_number_of_blocks():
    from crawler.extract.repeated import MAX_UNITS

    data = {"text": "\n\n".join(f"line {n}" for n in range(100_000))}
    assert len(page_units(data)) == MAX_UNITS


def test_the_end_of_a_crawl_cleans_in_turns_and_goes_on_where_it_stopped(database_url):
    """The stored pages are cleaned in batches within a time budget: a slice that runs out of
    it says where to go on, and the next one finishes the job (a large crawl's cleaning never
    outlives a slice job)."""
    from storage import collection_results, collection_store
    from storage.collection_store import PageOutcome
    from storage.db import Database
    from tests.test_collections_storage import account, collection

    db = Database(database_url)
    collection_id = collection(db, account(db, credits=10))
    outcomes = [PageOutcome(key=collection_results.page_key(f"http://a.test/{n}"),
                            url=f"http://a.test/{n}", status="succeeded",
                            data={"text": f"Page {n} of its own.\n\n{NOTICE}"})
                for n in range(5)]
    collection_store.store(db, collection_id, outcomes)
    repeated = {fingerprint(NOTICE)}
    stopped = clean_stored(db, collection_id, repeated, until=0, batch=2)  # out of time
    assert stopped == 2
    assert clean_stored(db, collection_id, repeated, after=stopped, batch=2) is None
    rows, _ = collection_results.page(db, collection_id)
    assert [collection_results.data_of(row)["text"] for row in rows] == [
        f"Page {n} of its own." for n in range(5)]
