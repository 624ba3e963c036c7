"""Skipped URLs end to end, checked against crawls whose answer is known
(``tests/support/site/crawlsite.py``): every URL a crawl saw is either a stored page or a
skipped one with the right reason, each once, and the counts add up to the URLs seen."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from datetime import timedelta
from typing import Any

import pytest
from redis import Redis
from sqlalchemy import func, select, update

from api import create_app
from client import Client
from client.cli import main as cli
from collecting.frontier import Frontier
from core.canonical import canonical_url
from core.contract import SKIP_REASONS
from storage.models import Collection, CollectionSkip, utcnow
from tests.conftest import make_config, new_customer
from tests.support.collection_stack import all_results, wait_final
from tests.support.site import crawlsite, sitemaps
from tests.test_collections import _pages, customer, path, start
from worker.maintenance import purge_expired_collections


def all_skipped(who: Any, collection_id: str, limit: int = 2, **query: str
                ) -> list[dict[str, Any]]:
    """Every skipped URL, page by page, following ``next_cursor`` until it is null."""
    found: list[dict[str, Any]] = []
    cursor = None
    for _ in range(1000):
        params = {"limit": str(limit), **query, **({"cursor": cursor} if cursor else {})}
        answer = who.get(f"/collections/{collection_id}/skipped", query_string=params)
        assert answer.status_code == 200, answer.get_json()
        body = answer.get_json()
        found += body["skipped"]
        cursor = body["next_cursor"]
        if cursor is None:
            return found
    raise AssertionError("the skipped URLs never ended")


def seen(site: str, results: list[dict[str, Any]]) -> set[str]:
    """The canonical URLs a crawl of ``/site/`` saw: its start, and the links of every page
    it stored (a page's links as its final URL serves them; a duplicate's are not read)."""
    urls = {canonical_url(f"{site}/site/")}
    for result in results:
        if result["status"] == "succeeded":
            for link in crawlsite.LINKS[path(result["final_url"]).split("?")[0]]:
                if not link.startswith("mailto:"):
                    urls.add(canonical_url(link if "://" in link else site + link))
    return urls


def check_known_answer(who: Any, site: str, collection_id: str) -> tuple[
        list[dict[str, Any]], list[dict[str, Any]], dict[str, int]]:
    """Every URL seen stored or skipped, never both, each once; the counts are the rows."""
    final = wait_final(who, collection_id)
    assert final["status"] == "completed", final
    results = all_results(who, collection_id, limit=5)
    skipped = all_skipped(who, collection_id)
    stored = [canonical_url(r["url"]) for r in results]
    skips = [canonical_url(s["url"]) for s in skipped]
    assert len(set(stored)) == len(stored) and len(set(skips)) == len(skips)
    assert not set(stored) & set(skips)
    assert set(stored) | set(skips) == seen(site, results)
    counts = final["progress"]["skipped"]
    assert set(counts) == set(SKIP_REASONS)
    assert Counter(s["reason"] for s in skipped) == +Counter(counts)
    for item in skipped:
        assert (item["duplicate_of"] is not None) == (item["reason"] == "duplicate")
    return results, skipped, counts


def by_reason(skipped: list[dict[str, Any]]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for item in skipped:
        found.setdefault(item["reason"], set()).add(path(item["url"]))
    return found


def duplicates_are_the_site_s(site: str, skipped: list[dict[str, Any]]) -> None:
    """/site/moved and /site/a are one page, as are /site/canon and /site/c: whichever claimed
    it second is the duplicate, of the other."""
    pairs = {"/site/moved": "/site/a", "/site/a": "/site/moved", "/site/canon": "/site/c",
             "/site/c": "/site/canon"}
    dups = {path(s["url"]): s["duplicate_of"] for s in skipped if s["reason"] == "duplicate"}
    assert len(dups) == 2 and {pairs[p] for p in dups}.isdisjoint(dups)
    assert all(of == canonical_url(site + pairs[p]) for p, of in dups.items())


@pytest.mark.parametrize("depth", [1, 4])
def test_every_url_a_crawl_saw_is_stored_or_skipped_with_its_reason(stack, site, depth):
    who = customer(stack)
    created = start(who, {"mode": "crawl", "url": f"{site}/site/", "max_depth": depth,
                          "use_sitemap": False})
    results, skipped, counts = check_known_answer(who, site, created["id"])
    assert len(results) == len(crawlsite.STORED[depth])
    expected = {"off_site": {"/elsewhere"}, "robots": {"/private/secret"}}
    if depth == 1:
        expected["depth"] = {"/site/a/1", "/site/a/2", "/site/b/1", "/site/deep/2"}
    assert {r: p for r, p in by_reason(skipped).items() if r != "duplicate"} == expected
    duplicates_are_the_site_s(site, skipped)
    assert counts == {**dict.fromkeys(SKIP_REASONS, 0), "duplicate": 2,
                      **{reason: len(paths) for reason, paths in expected.items()}}
    assert len(results) + sum(counts.values()) == len(seen(site, results))


def test_paths_refused_by_the_patterns_are_skipped_as_such(stack, site):
    who = customer(stack)
    created = start(who, {"mode": "crawl", "url": f"{site}/site/", "max_depth": 4,
                          "include_paths": ["^/site/(a|deep)"], "exclude_paths": ["/3$"],
                          "use_sitemap": False})
    _, skipped, _ = check_known_answer(who, site, created["id"])
    assert by_reason(skipped) == {
        "not_included": {"/site/b", "/site/c", "/site/print?print=1", "/site/moved",
                         "/site/canon", "/private/secret"},
        "off_site": {"/elsewhere"}, "excluded_path": {"/site/deep/3"}}


def test_urls_past_max_pages_are_skipped_as_limit(stack, site):
    who = customer(stack)
    created = start(who, {"mode": "crawl", "url": f"{site}/site/", "max_pages": 4,
                          "max_depth": 4, "use_sitemap": False})
    results, skipped, counts = check_known_answer(who, site, created["id"])
    assert len(results) == 4 and counts["limit"] >= 1
    assert counts["limit"] == len(by_reason(skipped)["limit"])


def test_the_skipped_endpoint_pages_filters_and_refuses(stack, site):
    who, other = customer(stack), customer(stack)
    created = start(who, {"mode": "crawl", "url": f"{site}/site/", "max_depth": 1,
                          "use_sitemap": False})
    wait_final(who, created["id"])
    url = f"/collections/{created['id']}/skipped"
    every = all_skipped(who, created["id"], limit=1)
    assert len(every) == 8 and every == all_skipped(who, created["id"], limit=100)
    depth = all_skipped(who, created["id"], limit=1, reason="depth")
    assert [s["url"] for s in depth] == [s["url"] for s in every if s["reason"] == "depth"]
    bad = who.get(url, query_string={"reason": "robot"})
    assert bad.status_code == 422 and "reason" in bad.get_json()["errors"]
    for query in ({"cursor": "nope"}, {"limit": "0"}, {"limit": "1001"}):
        assert who.get(url, query_string=query).status_code == 422
    results_cursor = who.get(f"/collections/{created['id']}/results",
                             query_string={"limit": "1"}).get_json()["next_cursor"]
    assert who.get(url, query_string={"cursor": results_cursor}).status_code == 422
    assert other.get(url).status_code == 404
    assert who.get("/collections/col_nope/skipped").status_code == 404


def test_expired_skips_answer_410_and_are_purged(stack, site):
    """Kept as long as the results: past ``expires_at`` a 410, and the purge deletes them
    (the counts stay, as the progress does)."""
    config = make_config(stack.database_url, stack.redis_url)
    who = new_customer(create_app(config), credits=20, plan="standard")
    created = start(who, {"mode": "crawl", "url": f"{site}/site/", "max_depth": 1,
                          "use_sitemap": False})
    final = wait_final(who, created["id"])
    db = who.app.extensions["webdata.db"]
    with db.session() as session:  # as if the retention had passed
        session.execute(update(Collection).where(Collection.id == created["id"])
                        .values(expires_at=utcnow() - timedelta(seconds=1)))
    answer = who.get(f"/collections/{created['id']}/skipped")
    assert (answer.status_code, answer.get_json()["error"]) == (410, "expired")
    purge_expired_collections(config)
    with db.session() as session:
        assert session.scalar(select(func.count()).select_from(CollectionSkip).where(
            CollectionSkip.collection_id == created["id"])) == 0
    shown = who.get(f"/collections/{created['id']}").get_json()
    assert shown["status"] == "expired"
    assert shown["progress"]["skipped"] == final["progress"]["skipped"]


def test_sitemap_urls_out_of_scope_are_skipped(stack, site):
    """The sitemaps' URLs pass the crawl's scope as links do (the sitemap reader keeps only
    the site's own: other sites' are never seen)."""
    who = customer(stack)
    created = start(who, {"mode": "crawl", "url": f"{site}/site/", "max_depth": 1,
                          "exclude_paths": ["^/news/"], "use_sitemap": True})
    assert wait_final(who, created["id"])["status"] == "completed"
    excluded = {path(s["url"]) for s in all_skipped(who, created["id"], reason="excluded_path")}
    assert excluded == {p for p in sitemaps.SITE_PAGES if p.startswith("/news/")}


@pytest.fixture
def forgetful(tmp_path, sqlite_url, site):
    """A stack whose one worker keeps no robots.txt between requests: a link's robots.txt is
    never known before the link is admitted, so every refusal happens at fetch time."""
    from tests.support.collection_stack import Stack

    stack = Stack(tmp_path, sqlite_url, site, workers=0)
    stack.env["CRAWLER_ROBOTSTXT_TTL"] = "0"
    stack.start_workers(1)
    yield stack
    stack.close()


def test_a_link_refused_only_at_its_fetch_is_a_skip_and_gives_its_slot_back(forgetful, site):
    """Admitted before its robots.txt was known, refused when fetched: a ``robots`` skip all
    the same, never a result or a charge, and its place of ``max_pages`` goes on to a page."""
    who = customer(forgetful)
    created = start(who, {"mode": "crawl", "url": f"{site}/site/", "max_depth": 4,
                          "max_pages": len(crawlsite.STORED[4]), "use_sitemap": False})
    results, skipped, counts = check_known_answer(who, site, created["id"])
    assert sorted(_pages(results)) == sorted(crawlsite.STORED[4])
    assert all(r["status"] == "succeeded" for r in results)
    assert by_reason(skipped)["robots"] == {"/private/secret"} and counts["robots"] == 1
    assert who.get(f"/collections/{created['id']}").get_json()["credits_used"] == len(results)
    # it was admitted (its fetch tried), not refused before: the frontier's seen-set has it
    seen_set = Frontier(Redis.from_url(forgetful.redis_url), created["id"]).keys["seen"]
    assert Redis.from_url(forgetful.redis_url).sismember(
        seen_set, canonical_url(f"{site}/private/secret"))


def exported(who: Any, url: str, **query: str) -> tuple[int, str]:
    """An export's status and body, read and closed (its account's stream slot goes back)."""
    answer = who.get(url, query_string=query)
    try:
        return answer.status_code, answer.get_data(as_text=True)
    finally:
        answer.close()


def test_the_export_can_include_the_skipped_urls(stack, site):
    """``include=skipped``: the skipped URLs follow the results in every format, as
    ``/skipped`` lists them with ``status: "skipped"``; a CSV gains their two columns."""
    who = customer(stack)
    created = start(who, {"mode": "crawl", "url": f"{site}/site/", "max_depth": 1,
                          "use_sitemap": False})
    results, skipped, _ = check_known_answer(who, site, created["id"])
    url = f"/collections/{created['id']}/export"
    expected = [{**item, "status": "skipped"} for item in skipped]
    whole = json.loads(exported(who, url, format="json", include="skipped")[1])
    assert whole[:len(results)] == results and whole[len(results):] == expected
    _, lines = exported(who, url, format="jsonl", include="skipped", status="succeeded",
                        fields="url")
    rows = [json.loads(line) for line in lines.splitlines()]
    assert rows == [{"url": r["url"]} for r in results if r["status"] == "succeeded"] + expected
    _, table = exported(who, url, format="csv", include="skipped", fields="url,status,data.title")
    cells = list(csv.DictReader(io.StringIO(table)))
    assert list(cells[0]) == ["url", "status", "title", "reason", "duplicate_of"]
    assert [(c["url"], c["status"], c["reason"], c["duplicate_of"]) for c in cells] == [
        (r["url"], r["status"], "", "") for r in results] + [
        (s["url"], "skipped", s["reason"], s["duplicate_of"] or "") for s in skipped]
    assert all(c["title"] for c in cells[:len(results)])
    assert not any(c["title"] for c in cells[len(results):])
    assert json.loads(exported(who, url, format="json")[1]) == results  # not asked: results
    for bad in ("skip", "skipped,gone", ","):
        status, body = exported(who, url, format="json", include=bad)
        assert status == 422 and "include" in json.loads(body)["errors"]
    status, body = exported(who, url, format="json", include="removed")  # no change tracking
    assert (status, json.loads(body)["error"]) == (409, "conflict")


def test_the_client_lists_and_exports_the_skipped_urls(stack, service, site, tmp_path,
                                                       monkeypatch, capsys):
    who = customer(stack)
    created = start(who, {"mode": "crawl", "url": f"{site}/site/", "max_depth": 1,
                          "use_sitemap": False})
    results, skipped, _ = check_known_answer(who, site, created["id"])
    client = Client(who.key, service)
    assert list(client.skipped(created["id"], limit=3)) == skipped
    assert [s["url"] for s in client.skipped(created["id"], reason="depth")] == [
        s["url"] for s in skipped if s["reason"] == "depth"]
    out = client.export(created["id"], tmp_path / "all.jsonl", skipped=True)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == len(results) + len(skipped) and rows[-1]["status"] == "skipped"
    monkeypatch.setenv("WEBDATA_API_KEY", who.key)
    monkeypatch.setenv("WEBDATA_API_URL", service)
    assert cli(["skipped", created["id"], "--reason", "robots"]) == 0
    assert capsys.readouterr().out == f"robots        {site}/private/secret\n"
    assert cli(["skipped", created["id"], "--json"]) == 0
    assert [json.loads(line) for line in capsys.readouterr().out.splitlines()] == skipped
    assert cli(["status", created["id"]]) == 0
    assert "skipped   4 depth, 2 duplicate, 1 robots, 1 off_site" in capsys.readouterr().out
