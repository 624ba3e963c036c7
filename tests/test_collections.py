"""Collections end to end: the API, warm workers on a shared Redis frontier, real crawls of the
loopback test site, the database. What a user does, and what they must never see: a
collection "not found" after creating it, a page stored or charged twice, a limit exceeded, a
fetch after cancel, another account's collection."""

from __future__ import annotations

import itertools
import json
import time
from urllib.parse import urlsplit

import pytest
from sqlalchemy import func, select
from standardwebhooks.webhooks import Webhook

from api import create_app
from collecting import control
from core.canonical import canonical_url
from core.contract import SKIP_REASONS
from storage.models import CollectionResult
from tests.conftest import SITE_HOST, Customer, make_config, new_customer
from tests.support.collection_stack import HOST_CAP, Stack, all_results, wait_final
from tests.support.site import crawlsite, sitemaps
from tests.support.site.server import serve
from tests.support.waits import wait_until
from tests.support.webhook_receiver import start_receiver
from worker.maintenance import purge_expired_collections


def customer(stack: Stack, credits: int = 100, plan: str = "standard") -> Customer:
    return new_customer(stack.app, credits=credits, plan=plan)


def start(who: Customer, body: dict) -> dict:
    answer = who.post("/collections", body)
    assert answer.status_code == 202, answer.get_json()
    return answer.get_json()


def path(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def test_a_batch_is_fetched_once_per_page_and_billed_per_success(stack, site, hit_counter):
    who = customer(stack, credits=10)
    urls = [f"{site}/article", f"{site}/article?utm_source=mail#top",  # one page, twice
            f"{site}/missing", f"{site}/private/batch"]  # a 404; robots.txt disallows it
    created = start(who, {"mode": "batch", "urls": urls})
    assert created["status"] in ("queued", "running") and created["id"].startswith("col_")
    assert who.get(f"/collections/{created['id']}").status_code == 200  # at once, not a 404
    final = wait_final(who, created["id"])
    assert final["status"] == "completed" and final["stop_reason"] is None
    assert final["progress"] == {"total": 3, "done": 3, "succeeded": 1, "failed": 2,
                                 "robots_blocked": 1, "skipped": dict.fromkeys(SKIP_REASONS, 0),
                                 "changes": None}
    assert final["credits_used"] == 1 and final["expires_at"] and final["finished_at"]
    results = all_results(who, created["id"], limit=1)
    assert sorted(path(r["url"]) for r in results) == ["/article", "/missing", "/private/batch"]
    by_path = {path(r["url"]): r for r in results}
    assert by_path["/article"]["data"]["title"] and by_path["/article"]["error"] is None
    assert by_path["/missing"]["error"]["error"] == "target_http_error"
    assert by_path["/private/batch"]["error"]["error"] == "robots_disallowed"
    assert who.balance() == 9
    line = next(a for a in who.activity() if a["operation"] == "collection")
    assert (line["collection_id"], line["credits"]) == (created["id"], 1)
    assert sum(a["credits"] for a in who.activity()) == -who.balance()
    failed = all_results(who, created["id"], status="failed")
    assert {r["status"] for r in failed} == {"failed"} and len(failed) == 2


def test_a_slice_queued_by_the_previous_release_still_runs(stack, site, monkeypatch):
    """A slice job waiting in Redis across an upgrade carries the name it was enqueued under
    before the collections moved to ``collecting``: the workers still run it."""
    monkeypatch.setattr(control, "SLICE_JOB", "worker.collections.run_slice")
    who = customer(stack)
    created = start(who, {"mode": "batch", "urls": [f"{site}/article"]})
    final = wait_final(who, created["id"])
    assert final["status"] == "completed" and final["progress"]["succeeded"] == 1


@pytest.mark.parametrize("depth", [1, 4])
def test_a_crawl_stays_on_the_site_within_its_depth(stack, site, depth):
    who = customer(stack)
    created = start(who, {"mode": "crawl", "url": f"{site}/site/", "max_depth": depth,
                          "use_sitemap": False})
    final = wait_final(who, created["id"])
    assert final["status"] == "completed", final
    results = all_results(who, created["id"], limit=4)
    assert sorted(_pages(results)) == sorted(crawlsite.STORED[depth])  # each page once
    assert all(r["status"] == "succeeded" for r in results)
    assert final["progress"]["robots_blocked"] == 0  # /private/secret: a skip, not a result
    assert final["progress"]["skipped"]["robots"] == 1
    assert final["progress"]["done"] == final["progress"]["total"] == len(results)
    assert final["credits_used"] == len(results) == 100 - who.balance()


def test_only_pages_fetched_count_toward_max_pages(stack, site):
    """A link robots.txt disallows takes no place of ``max_pages``: a crawl with exactly as
    many places as the site has pages stores every one of them."""
    who = customer(stack)
    created = start(who, {"mode": "crawl", "url": f"{site}/site/", "max_depth": 4,
                          "max_pages": len(crawlsite.STORED[4]), "use_sitemap": False})
    final = wait_final(who, created["id"])
    results = all_results(who, created["id"], limit=50)
    assert sorted(_pages(results)) == sorted(crawlsite.STORED[4])
    assert all(r["status"] == "succeeded" for r in results)
    assert final["progress"]["skipped"]["robots"] == 1


def test_a_crawl_does_not_follow_a_redirect_to_another_site(stack, site):
    """The crawl stays on its site: a page moved to another site (here another port of its
    host) is a failed page saying so, never fetched there, stored or charged."""
    who = customer(stack)
    created = start(who, {"mode": "crawl", "url": f"{site}/redirect-off-site", "max_depth": 0,
                          "use_sitemap": False})
    final = wait_final(who, created["id"])
    [result] = all_results(who, created["id"])
    assert result["status"] == "failed" and result["error"]["error"] == "fetch_failed"
    assert "another site" in result["error"]["message"], result["error"]
    assert final["credits_used"] == 0 and who.balance() == 100


def _pages(results: list[dict]) -> list[str]:
    """Each result as the page it is: one stored under its redirect or rel=canonical counts
    as the page it leads to."""
    same = {"/site/moved": "/site/a", "/site/canon": "/site/c"}
    paths = (path(canonical_url(r["url"])) for r in results)  # as the frontier saw them
    return [same.get(p, p) for p in paths]


@pytest.mark.parametrize(("depth", "from_sitemap"), [(1, set(sitemaps.SITE_PAGES)), (0, set())])
def test_a_crawl_reads_the_sitemaps_as_depth_one(stack, site, depth, from_sitemap):
    who = customer(stack)
    created = start(who, {"mode": "crawl", "url": f"{site}/site/", "max_depth": depth,
                          "use_sitemap": True})
    assert wait_final(who, created["id"])["status"] == "completed"
    pages = _pages(all_results(who, created["id"], limit=50))
    expected = crawlsite.STORED[depth] if depth else {"/site/"}
    assert sorted(pages) == sorted(expected | from_sitemap)  # other sites' URLs dropped


def test_max_pages_is_exact(stack, site, hit_counter):
    who = customer(stack)
    created = start(who, {"mode": "crawl", "url": f"{site}/site/", "max_pages": 4,
                          "max_depth": 4, "use_sitemap": False})
    final = wait_final(who, created["id"])
    assert final["status"] == "completed"
    assert final["progress"]["done"] == 4 == len(all_results(who, created["id"]))


def test_include_and_exclude_paths(stack, site):
    who = customer(stack)
    created = start(who, {"mode": "crawl", "url": f"{site}/site/", "max_depth": 4,
                          "include_paths": ["^/site/(a|deep)"], "exclude_paths": ["/3$"],
                          "use_sitemap": False})
    wait_final(who, created["id"])
    pages = {path(r["final_url"] or r["url"]) for r in all_results(who, created["id"])}
    assert pages == {"/site/", "/site/a", "/site/a/1", "/site/a/2", "/site/deep/1",
                     "/site/deep/2"}


def test_cancel_stops_fetching_and_charging(stack, site, site_server):
    who = customer(stack)
    urls = [f"{site}/slow/cancel{n}?ms=1500" for n in range(40)]
    created = start(who, {"mode": "batch", "urls": urls})
    # its URLs admitted (a batch admits them all before the first fetch)
    wait_until(lambda: _fetches(site_server, "/slow/cancel"), "a page to be asked for",
               pause=0.05)
    answer = who.post(f"/collections/{created['id']}/cancel", {})
    assert answer.status_code == 200 and answer.get_json()["status"] == "cancelled"
    fetched = _fetches(site_server, "/slow/cancel")
    time.sleep(2)  # a slice that went on would have fetched more by now
    assert _fetches(site_server, "/slow/cancel") == fetched < 40
    charged = who.get(f"/collections/{created['id']}").get_json()["credits_used"]
    again = who.post(f"/collections/{created['id']}/cancel", {})
    assert again.status_code == 200 and again.get_json()["credits_used"] == charged
    assert 100 - who.balance() == charged < 40
    assert sum(a["credits"] for a in who.activity()) == -who.balance()
    # every URL is a result or a skip of the cancel, once (a slice stopping at that moment
    # records what it gave back just after the answer)
    def accounted() -> int:
        progress = who.get(f"/collections/{created['id']}").get_json()["progress"]
        return progress["done"] + progress["skipped"]["cancelled"]

    wait_until(lambda: accounted() == 40, "every URL a result or a skip", pause=0.1)
    listed = who.get(f"/collections/{created['id']}/skipped?limit=100").get_json()["skipped"]
    stored = {r["url"] for r in all_results(who, created["id"])}
    assert {s["reason"] for s in listed} == {"cancelled"} and len(listed) == 40 - len(stored)
    assert {s["url"] for s in listed} == set(urls) - stored


def _fetches(server, prefix: str) -> int:
    return sum(n for p, n in list(server.requests.items()) if p.startswith(prefix))


def test_what_a_user_may_not_do(stack, site):
    who, other = customer(stack, plan="free"), customer(stack)
    created = start(who, {"mode": "batch", "urls": [f"{site}/slow/limit?ms=1500"]})
    for call in (lambda: other.get(f"/collections/{created['id']}"),
                 lambda: other.get(f"/collections/{created['id']}/results"),
                 lambda: other.post(f"/collections/{created['id']}/cancel", {})):
        assert call().status_code == 404
    assert created["id"] not in {c["id"] for c in other.get("/collections").get_json()[
        "collections"]}
    # free: one collection at a time
    busy = who.post("/collections", {"mode": "batch", "urls": [f"{site}/article"]})
    assert (busy.status_code, busy.get_json()["error"]) == (429, "collection_limit")
    too_many = who.post("/collections", {"mode": "batch",
                                         "urls": [f"{site}/p{n}" for n in range(101)]})
    assert (too_many.status_code, too_many.get_json()["error"]) == (413, "too_many_urls")
    bad = who.post("/collections", {"mode": "batch", "urls": [f"{site}/a", "ftp://x/", "nope"]})
    assert bad.status_code == 422 and set(bad.get_json()["errors"]["urls"]) == {"1", "2"}
    pages = who.post("/collections", {"mode": "crawl", "url": f"{site}/", "max_pages": 101})
    assert pages.status_code == 422 and "max_pages" in pages.get_json()["errors"]
    broke = customer(stack, credits=0).post("/collections", {"mode": "batch",
                                                             "urls": [f"{site}/article"]})
    assert (broke.status_code, broke.get_json()["error"]) == (402, "insufficient_credits")
    wait_final(who, created["id"])
    finished = who.post(f"/collections/{created['id']}/cancel", {})
    assert (finished.status_code, finished.get_json()["error"]) == (409, "conflict")
    refused = [a for a in who.activity() if a["operation"] == "collection"
               and a["status"] == "failed"]
    assert len(refused) == 4 and all(a["credits"] == 0 for a in refused)


def test_listing_is_newest_first_and_paginated(stack, site):
    who = customer(stack)
    ids = [start(who, {"mode": "batch", "urls": [f"{site}/article"]})["id"] for _ in range(3)]
    seen, cursor = [], None
    while True:
        query = {"limit": "2", **({"cursor": cursor} if cursor else {})}
        body = who.get("/collections", query_string=query).get_json()
        seen += [c["id"] for c in body["collections"]]
        cursor = body["next_cursor"]
        if cursor is None:
            break
    assert seen == ids[::-1]
    assert who.get("/collections", query_string={"cursor": "bogus"}).status_code == 422


def test_an_empty_pages_cursor_is_taken_back_while_the_collection_runs(stack, site):
    """Polling (docs/api.md, Results): an empty page's cursor, given before anything (or
    anything of that status) is stored, is passed back like any other and then brings every
    result."""
    who = customer(stack)
    url = f"{site}/slow/empty-cursor?ms=1000"
    created = start(who, {"mode": "batch", "urls": [url]})
    results = f"/collections/{created['id']}/results"
    empty = who.get(results, query_string={"status": "failed"}).get_json()
    assert empty["results"] == [] and empty["next_cursor"]
    again = who.get(results, query_string={"status": "failed", "cursor": empty["next_cursor"]})
    assert again.status_code == 200, again.get_json()
    wait_final(who, created["id"])
    rest = who.get(results, query_string={"cursor": empty["next_cursor"]}).get_json()
    assert [r["url"] for r in rest["results"]] == [url] and rest["next_cursor"] is None


def test_the_host_cap_holds_across_worker_processes(stack, site, site_server):
    """Two workers, two slices of 8 pages each: one host still never has more than the
    cap open at once (the test site counts them)."""
    who = customer(stack)
    urls = [f"{site}/slow/polite?ms=300&n={n}" for n in range(24)]
    final = wait_final(who, start(who, {"mode": "batch", "urls": urls})["id"])
    assert final["progress"]["succeeded"] == 24
    assert 2 <= site_server.open_peak["polite"] <= HOST_CAP  # 3 seen in practice


def test_crawl_delay_holds_across_worker_processes(stack):
    """A site whose robots.txt asks for a second between requests gets them a second apart,
    whichever worker sends them, from the first page on."""
    server = serve(SITE_HOST, 0, robots_extra="Crawl-delay: 1\n")
    try:
        base = f"http://{SITE_HOST}:{server.server_address[1]}"
        who = customer(stack)
        urls = [f"{base}/site/{name}" for name in ("a", "b", "c", "a/1")]
        final = wait_final(who, start(who, {"mode": "batch", "urls": urls})["id"])
        assert final["progress"]["succeeded"] == 4, final
        pages = [at for at, path in server.arrivals if path.startswith("/site/")]
        assert len(pages) == 4, server.arrivals
        gaps = [later - earlier for earlier, later in itertools.pairwise(pages)]
        assert min(gaps) >= 0.95, (gaps, server.arrivals)
    finally:
        server.shutdown()
        server.server_close()


def test_the_collection_stops_when_the_balance_runs_out(stack, site):
    who = customer(stack, credits=2)
    urls = [f"{site}/site/{name}" for name in ("a", "b", "c", "a/1", "a/2", "b/1")]
    final = wait_final(who, start(who, {"mode": "batch", "urls": urls})["id"])
    assert (final["status"], final["stop_reason"]) == ("failed", "insufficient_credits")
    assert final["credits_used"] == 2 == final["progress"]["succeeded"]
    assert who.balance() == 0
    # the pages it could not pay for, and those left, are skips of the stop (recorded just
    # after it)
    def accounted() -> int:
        progress = who.get(f"/collections/{final['id']}").get_json()["progress"]
        return progress["done"] + progress["skipped"]["cancelled"]

    wait_until(lambda: accounted() == len(urls), "every URL a result or a skip", pause=0.1)
    assert sum(a["credits"] for a in who.activity()) == 0  # granted 2, charged 2


def test_an_idempotent_retry_creates_no_second_collection(stack, site):
    who = customer(stack)
    body = {"mode": "batch", "urls": [f"{site}/article"]}
    headers = {**who.headers, "Idempotency-Key": "col-retry-1"}
    first = who.client.post("/api/service/v1/collections", json=body, headers=headers)
    again = who.client.post("/api/service/v1/collections", json=body, headers=headers)
    assert first.status_code == again.status_code == 202
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.get_json()["id"] == first.get_json()["id"]
    assert len(who.get("/collections").get_json()["collections"]) == 1


def test_a_cancel_needs_no_body(stack, site):
    who = customer(stack)
    created = start(who, {"mode": "batch", "urls": [f"{site}/slow/bodyless?ms=1500"]})
    url = f"/api/service/v1/collections/{created['id']}/cancel"
    for headers in ({}, {"Content-Type": "application/json"}, {"Idempotency-Key": "c-1"}):
        answer = who.client.post(url, headers={**who.headers, **headers})
        assert answer.status_code == 200, answer.get_json()
        assert answer.get_json()["status"] == "cancelled"
    not_json = who.client.post(url, data="cancel", headers=who.headers)
    assert (not_json.status_code, not_json.get_json()["error"]) == (400, "bad_request")


def test_a_bad_pattern_or_a_refused_start_url_is_refused_before_anything_runs(stack, site):
    who = customer(stack)
    bad = who.post("/collections", {"mode": "crawl", "url": f"{site}/site/",
                                    "include_paths": ["^/ok/", "(unclosed"]})
    assert bad.status_code == 422 and set(bad.get_json()["errors"]["include_paths"]) == {"1"}
    private = who.post("/collections", {"mode": "crawl", "url": "http://10.0.0.1/"})
    assert (private.status_code, private.get_json()["error"]) == (403, "source_policy")
    foreign = who.post("/collections", {"mode": "batch", "urls": [f"{site}/a"], "url": site})
    assert foreign.status_code == 422 and "url" in foreign.get_json()["errors"]
    assert who.get("/collections").get_json()["collections"] == []
    assert who.balance() == 100


def test_a_finished_collection_calls_its_webhook_once(stack, site):
    receiver = start_receiver()
    try:
        who = customer(stack)
        secret = who.post("/account/webhook-secret", None).get_json()["secret"]
        created = start(who, {"mode": "batch", "urls": [f"{site}/article"],
                              "webhook_url": receiver.url})
        assert created["webhook"] == {"status": "pending", "attempts": 0, "last_status": None}
        final = wait_final(who, created["id"])
        delivered = _delivered(who, created["id"])
        assert delivered["webhook"] == {"status": "delivered", "attempts": 1, "last_status": 204}
        [request] = receiver.received
        payload = Webhook(secret).verify(request.body, request.headers)  # or it raises
        assert payload["event"] == "collection.completed"
        assert payload["collection"]["id"] == created["id"]
        assert payload["collection"]["progress"] == final["progress"]
        urls = [f"{site}/slow/hook{n}?ms=1500" for n in range(10)]
        cancelled = start(who, {"mode": "batch", "urls": urls, "webhook_url": receiver.url})
        assert who.post(f"/collections/{cancelled['id']}/cancel", None).status_code == 200
        _delivered(who, cancelled["id"])
        events = {json.loads(r.body)["collection"]["id"]: json.loads(r.body)["event"]
                  for r in receiver.received}
        assert events == {created["id"]: "collection.completed",
                          cancelled["id"]: "collection.cancelled"}
        assert len(receiver.received) == 2  # one per collection
    finally:
        receiver.close()


def test_every_page_event_of_a_batch_is_delivered_once(stack, site):
    """``collection.page`` through the real workers: one event per stored page, each
    received once (by ``webhook-id``), signed, with the start and the end."""
    receiver = start_receiver()
    try:
        who = customer(stack, credits=400)
        secret = who.post("/account/webhook-secret", None).get_json()["secret"]
        urls = [f"{site}/slow/event{n}?ms=0" for n in range(240)]
        created = start(who, {"mode": "batch", "urls": urls, "webhook_url": receiver.url,
                              "webhook_events": ["collection.started", "collection.page",
                                                 "collection.completed"]})
        final = wait_final(who, created["id"], timeout=120)
        assert final["progress"]["done"] == 240
        wait_until(lambda: len({r.headers["webhook-id"] for r in receiver.received}) >= 242,
                   "every event to arrive", timeout=120, pause=0.2)
        ids = [r.headers["webhook-id"] for r in receiver.received]
        assert len(ids) == len(set(ids)) == 242
        payloads = [Webhook(secret).verify(r.body, r.headers) for r in receiver.received]
        pages = sorted(p["page"]["seq"] for p in payloads if p["event"] == "collection.page")
        assert pages == list(range(1, 241))
        assert {p["page"]["url"] for p in payloads if p["event"] == "collection.page"} == {
            r["url"] for r in all_results(who, created["id"], limit=100)}
    finally:
        receiver.close()


def _delivered(who: Customer, collection_id: str) -> dict:
    shown: dict = {}

    def done() -> bool:
        shown.update(who.get(f"/collections/{collection_id}").get_json())
        return shown["webhook"]["status"] == "delivered"

    wait_until(done, "the webhook to be delivered", timeout=30, pause=0.1)
    return shown


def test_expired_results_answer_410_and_are_purged(stack, site):
    """With retention shortened to a second: the results answer 410, the object says
    ``expired`` (with its progress), and the purge deletes every result, in batches."""
    config = make_config(stack.database_url, stack.redis_url, collection_retention_seconds=1,
                         collection_purge_batch=2)
    who = new_customer(create_app(config), credits=20, plan="standard")
    created = start(who, {"mode": "batch",
                          "urls": [f"{site}/slow/purge{n}?ms=200" for n in range(20)]})
    wait_until(lambda: who.get(f"/collections/{created['id']}").get_json()["progress"]["done"]
               >= 5, "some pages to be stored", pause=0.1)
    assert who.post(f"/collections/{created['id']}/cancel", None).status_code == 200
    stored = len(all_results(who, created["id"], limit=100))
    assert stored >= 5
    wait_until(lambda: who.get(f"/collections/{created['id']}/results").status_code == 410,
               "the results to expire", timeout=10, pause=0.2)
    gone = who.get(f"/collections/{created['id']}/results").get_json()
    assert gone["error"] == "expired"
    assert purge_expired_collections(config) >= stored  # other tests' expired ones too
    db = who.app.extensions["webdata.db"]
    with db.session() as session:
        left = session.scalar(select(func.count()).select_from(CollectionResult)
                              .where(CollectionResult.collection_id == created["id"]))
    assert left == 0
    assert purge_expired_collections(config) == 0  # idempotent
    shown = who.get(f"/collections/{created['id']}").get_json()
    assert shown["status"] == "expired" and shown["progress"]["done"] == stored
    assert shown["credits_used"] == 20 - who.balance()  # the money stays as it was
