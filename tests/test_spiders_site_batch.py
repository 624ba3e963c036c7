"""``scrapy crawl site`` and ``scrapy crawl batch``: the collections' rules without the API,
checked with real ``scrapy crawl … -O`` runs against the loopback test site.

The crawls run at once, as separate processes (one reactor per process), in a module fixture;
each test reads the feed its crawl wrote. What a crawl of ``/site/`` must store is what the
API stores (``tests/support/site/crawlsite.py``, ``STORED``; ``tests/test_collections.py``).
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from collecting.frontier import Frontier
from core.canonical import canonical_url
from core.items import PageResult
from crawler.exporters import JsonCellCsvItemExporter
from crawler.spiders.batch import BatchSpider
from crawler.spiders.operations import spider_class
from crawler.spiders.site import SiteSpider
from tests.conftest import ALLOWED, ROOT
from tests.support.site import crawlsite
from tests.support.site.sitemaps import SITE_PAGES

PageSpider = spider_class("page")
ContactsSpider = spider_class("contacts")
ProductsSpider = spider_class("products")

#: A page stored under its redirect or its rel=canonical is the same page.
SAME = {"/site/moved": "/site/a", "/site/canon": "/site/c"}
#: A tag of the slow path only the batch fetches (the server counts requests by path).
BATCH_TAG = "/slow/batch-once"


def path(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def pages(results: list[dict[str, Any]]) -> list[str]:
    return [SAME.get(path(r["url"]), path(r["url"])) for r in results]


def crawls(site: str, policy_port: int, tmp: Path) -> dict[str, list[str]]:
    """name → the ``scrapy crawl`` arguments (the feed is ``tmp/<name>.<format>``)."""
    (tmp / "urls.txt").write_text(
        f"# the pages of this batch\n{site}/product\n\n{site}{BATCH_TAG}?ms=0\n"
        f"{site}{BATCH_TAG}?utm_source=mail&ms=0#top\n{site}/missing\n{site}/private/one\n"
        f"{site}/private/two\nhttp://2130706433:{policy_port}/\n{site}/private/three\n")
    crawl = ["-a", f"url={site}/site/", "-a", "use_sitemap=false"]
    return {
        "depth1": [*crawl, "-a", "max_depth=1"],
        "depth4": [*crawl, "-a", "max_depth=4"],
        "pages4": [*crawl, "-a", "max_depth=4", "-a", "max_pages=4"],
        # the two duplicates of depth 1 give their slots to the links waiting
        "pages7": [*crawl, "-a", "max_depth=1", "-a", "max_pages=7"],
        "paths": [*crawl, "-a", "max_depth=4", "-a", "include_paths=^/site/(a|deep)",
                  "-a", 'exclude_paths=["/3$", "\\\\?print="]'],
        "sitemap": ["-a", f"url={site}/", "-a", "max_depth=1"],
        "sitemap3": ["-a", f"url={site}/", "-a", "max_depth=1", "-a", "max_pages=3"],
        "site_contacts": ["-a", f"url={site}/contact", "-a", "max_depth=0",
                          "-a", "extract=contacts"],
        "batch_csv": ["-a", f"urls_file={tmp / 'urls.txt'}", "-a", "extract=products"],
        "batch_products": ["-a", f"urls={site}/product,{site}/article"
                                 f"?utm_source=x,{site}/article", "-a", "extract=products"],
        "contacts": ["-a", f"url={site}/contact"],
        "products": ["-a", f"url={site}/product"],
    }


def spider_of(name: str) -> str:
    if name.startswith("batch"):
        return "batch"
    return name if name in ("contacts", "products") else "site"


@pytest.fixture(scope="module")
def feeds(tmp_path_factory, site, site_server, hit_counter) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("feeds")
    env = {**os.environ, "CRAWLER_ALLOWED_NETWORKS": ALLOWED, "CRAWLER_LOG_LEVEL": "ERROR"}
    hits, fetches = hit_counter.hits, site_server.requests[BATCH_TAG]
    procs = {}
    for name, args in crawls(site, hit_counter.port, tmp).items():
        out = tmp / (f"{name}.csv" if name.endswith("csv") else f"{name}.jsonl")
        procs[name] = (out, subprocess.Popen(
            [sys.executable, "-m", "scrapy", "crawl", spider_of(name), *args, "-O", str(out)],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    found: dict[str, Any] = {}
    for name, (out, proc) in procs.items():
        _, stderr = proc.communicate(timeout=180)
        assert proc.returncode == 0 and "Traceback" not in stderr, (name, stderr[-3000:])
        text = out.read_text(encoding="utf-8")
        found[name] = (list(csv.DictReader(io.StringIO(text))) if out.suffix == ".csv"
                       else [json.loads(line) for line in text.splitlines()])
    found["policy_hits"] = hit_counter.hits - hits
    found["batch_fetches"] = site_server.requests[BATCH_TAG] - fetches
    return found


@pytest.mark.parametrize("depth", [1, 4])
def test_a_site_crawl_stores_what_the_api_stores(feeds, site, depth):
    results = feeds[f"depth{depth}"]
    assert sorted(pages(results)) == sorted(crawlsite.STORED[depth])  # each page once
    assert results[0]["url"] == f"{site}/site/"  # the start URL first
    assert all(r["status"] == "succeeded" for r in results)  # /private/secret: skipped
    assert all(r["data"]["title"] for r in results if r["status"] == "succeeded")
    assert set(results[0]) == {"url", "final_url", "status", "status_code", "fetched_at",
                               "error", "data"}


def test_max_pages_is_exact_and_duplicates_give_their_slots_back(feeds, site):
    assert len(feeds["pages4"]) == 4 and feeds["pages4"][0]["url"] == f"{site}/site/"
    assert len(set(pages(feeds["pages4"]))) == 4
    # /site/ and its first 6 links fill the 7 slots; /site/moved and /site/a turn out one page
    # after their fetch, so do /site/canon and /site/c: the duplicates give their slots to the
    # link left waiting (/site/canon) and back to the budget: /private/secret, which
    # robots.txt disallows, never takes one
    assert sorted(pages(feeds["pages7"])) == sorted(crawlsite.STORED[1])


def test_include_and_exclude_paths(feeds):
    assert {path(r["final_url"] or r["url"]) for r in feeds["paths"]} == {
        "/site/", "/site/a", "/site/a/1", "/site/a/2", "/site/deep/1", "/site/deep/2"}


def test_sitemap_urls_are_depth_one(feeds, site):
    results = feeds["sitemap"]
    assert results[0]["url"] == f"{site}/"  # a 404 here, still the first result
    # each once (whichever spelling a sitemap read first), other sites dropped
    assert sorted(path(canonical_url(r["url"])) for r in results) == sorted(["/", *SITE_PAGES])
    limited = feeds["sitemap3"]
    assert len(limited) == 3 and limited[0]["url"] == f"{site}/"
    assert {path(canonical_url(r["url"])) for r in limited[1:]} <= set(SITE_PAGES)


def test_pages_are_extracted_as_by_the_single_page_spiders(feeds, site):
    (contacts,) = feeds["site_contacts"]
    assert contacts["data"]["emails"] and contacts["data"] == feeds["contacts"][0]["data"]
    products = {path(r["url"]): r for r in feeds["batch_products"]}
    assert set(products) == {"/product", "/article?utm_source=x"}  # the first spelling
    assert products["/product"]["data"] == feeds["products"][0]["data"]
    assert products["/product"]["data"]["products"][0]["name"] == "Tide clock, brass"
    assert products["/article?utm_source=x"]["data"]["products"] == []


def test_a_batch_fetches_each_page_once_and_writes_a_readable_csv(feeds, site):
    rows = {path(row["url"]) if "2130706433" not in row["url"] else "policy": row
            for row in feeds["batch_csv"]}
    assert set(rows) == {"/product", f"{BATCH_TAG}?ms=0", "/missing", "/private/one",
                         "/private/two", "/private/three", "policy"}
    assert feeds["batch_fetches"] == 1  # listed twice, fetched once
    errors = {name: json.loads(row["error"])["error"] if row["error"] else None
              for name, row in rows.items()}
    assert errors == {"/product": None, f"{BATCH_TAG}?ms=0": None,
                      "/missing": "target_http_error", "/private/one": "robots_disallowed",
                      "/private/two": "robots_disallowed",
                      "/private/three": "robots_disallowed", "policy": "source_policy"}
    assert feeds["policy_hits"] == 0  # the source policy holds for scrapy crawl too
    product = json.loads(rows["/product"]["data"])
    assert product["products"][0]["offers"] and rows["/product"]["status"] == "succeeded"
    assert rows["/product"]["status_code"] == "200" and rows["/missing"]["data"] == ""


def test_csv_cells_never_start_a_formula():
    out = io.BytesIO()
    exporter = JsonCellCsvItemExporter(out)
    exporter.start_exporting()
    exporter.export_item(PageResult(url="=HYPERLINK(\"x\")", status="failed",
                                    final_url="\ufeff\u200b@SUM(A1)", data={"title": "=1+1"}))
    exporter.finish_exporting()
    (row,) = csv.DictReader(io.StringIO(out.getvalue().decode()))
    assert (row["url"], row["final_url"]) == ("'=HYPERLINK(\"x\")", "'\ufeff\u200b@SUM(A1)")
    assert json.loads(row["data"]) == {"title": "=1+1"}  # inside JSON text it is data


@pytest.mark.parametrize(("spider", "kwargs", "message"), [
    (SiteSpider, {}, "site: pass the start page with -a url="),
    (SiteSpider, {"url": "ftp://example.com/"}, "not an http"),
    (SiteSpider, {"url": "https://example.com/", "max_pages": "0"}, "max_pages"),
    (SiteSpider, {"url": "https://example.com/", "max_depth": "two"}, "max_depth"),
    (SiteSpider, {"url": "https://example.com/", "include_paths": "(docs"},
     "include_paths: '\\(docs': Not a valid regular expression"),
    (SiteSpider, {"url": "https://example.com/", "exclude_paths": '["ok", "[a-"]'},
     "exclude_paths: '\\[a-'"),
    (SiteSpider, {"url": "https://example.com/", "include_paths": r"(a)\1"},  # RE2 refuses
     r"include_paths: '\(a\)\\\\1': Not a valid regular expression: invalid escape sequence: "
     r".*RE2 syntax is accepted"),
    (SiteSpider, {"url": "https://example.com/", "exclude_paths": '["ok", "a(?=b)"]'},
     r"exclude_paths: 'a\(\?=b\)': Not a valid regular expression: invalid perl operator"),
    (SiteSpider, {"url": "https://example.com/", "extract": "video"}, "extract must be"),
    (BatchSpider, {}, "batch: pass the pages"),
    (BatchSpider, {"urls": "nope,https://example.com/"},
     "not http\\(s\\) URLs: urls\\[0\\]: 'nope'$"),
    (BatchSpider, {"urls": ["https://example.com/", "mailto:a@b.c"]}, "urls\\[1\\]"),
    (PageSpider, {}, "page: pass the page with -a url="),
])
def test_bad_arguments_stop_the_spider_at_once(spider, kwargs, message):
    with pytest.raises(ValueError, match=message):
        spider(**kwargs)


@pytest.mark.parametrize("url", ["example.com/contact", " ", "http://[::1/",
                                 "http://example.com:99999/"])
@pytest.mark.parametrize("spider", [PageSpider, ContactsSpider, ProductsSpider])
def test_a_url_scrapy_cannot_request_is_the_pages_failed_result(spider, url):
    """Not Scrapy's traceback at the start (``scrapy crawl`` wrote nothing and exited 0; a
    job enqueued by batch code had no result): the page's one result says why."""
    async def results() -> list:
        return [output async for output in spider(url=url).start()]

    [result] = asyncio.run(results())
    assert result.status == "failed" and result.url == url
    assert result.error["error"] == "source_policy" and "http" in result.error["message"]


def test_arguments_as_scrapy_crawl_passes_them(tmp_path):
    crawl = SiteSpider(url=" https://www.example.com/docs/ ", max_pages="50", max_depth="2",
                       include_paths='["^/docs/", "^/blog/"]', exclude_paths="[0-9]+$",
                       use_sitemap="false", extract="products")
    assert (crawl.max_pages, crawl.max_depth, crawl.use_sitemap) == (50, 2, False)
    assert crawl.scope.include_paths == ("^/docs/", "^/blog/")
    assert crawl.scope.exclude_paths == ("[0-9]+$",)  # a regex, though it starts with [
    assert crawl.scope.follows("https://example.com/blog/x", 2)
    (tmp_path / "urls.txt").write_text("https://a.example/\n# no\n\nhttps://a.example/#x\n")
    batch = BatchSpider(urls="https://b.example/?q=1,2,https://c.example/",
                        urls_file=str(tmp_path / "urls.txt"))

    async def requests() -> list:
        return [request async for request in batch.start()]

    try:  # on the collections' frontier, in a Redis of the crawl's own
        fetched = [request.cb_kwargs["entry"].url for request in asyncio.run(requests())]
        assert isinstance(batch.frontier, Frontier) and batch.frontier.state().admitted == 3
    finally:
        batch.closed("finished")
    assert fetched == ["https://b.example/?q=1,2", "https://c.example/", "https://a.example/"]
    assert batch.frontier is None  # closed with its Redis
