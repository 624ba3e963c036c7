"""``sitemap_urls``: the page URLs of a site's sitemaps, found by real crawls of loopback sites.

The crawls run in a process of their own (one reactor per process) through the warm crawler,
as the worker runs them (``shared_crawler().crawl(SitemapUrlsSpider, …)``), and once with
``scrapy crawl``. Each case gets a site of its own, so its request counts are its own.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from scrapy import Request
from scrapy.http import XmlResponse
from scrapy.utils.test import get_crawler

from core.canonical import canonical_url
from crawler.spiders.sitemap import SitemapUrlsSpider
from tests.conftest import ROOT, SITE_HOST, WORKER_ENV
from tests.support.site.server import Server, serve
from tests.support.site.sitemaps import OTHER_SITES, SITE_PAGES

pytestmark = pytest.mark.stack  # starts processes (tests/conftest.py)

SCRIPT = r"""
import json, sys
from crawler.runner import shared_crawler
from crawler.spiders.sitemap import SitemapUrlsSpider

results = {}
for name, url, max_urls in json.loads(sys.argv[1]):
    try:
        results[name] = shared_crawler().crawl(SitemapUrlsSpider, url=url, max_urls=max_urls,
                                               timeout=30)
    except Exception as exc:
        results[name] = f"raised {exc!r}"
print(json.dumps(results))
"""
#: name → paths that site answers 404 for.
SITES = {
    "full": (),
    "limited": (),
    "no_robots": ("/robots.txt",),
    "no_index": ("/sitemap.xml",),
}


def base(server: Server) -> str:
    return f"http://{SITE_HOST}:{server.server_address[1]}"


def urls(server: Server, paths: Any) -> set[str]:
    return {base(server) + path for path in paths}


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, Server]]:
    running = {name: serve(SITE_HOST, 0, missing=missing) for name, missing in SITES.items()}
    yield running
    for server in running.values():
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def closed_port() -> Iterator[int]:
    """A port bound on the site's address but not listening: connections are refused."""
    sock = socket.socket()
    sock.bind((SITE_HOST, 0))
    yield sock.getsockname()[1]
    sock.close()


@pytest.fixture(scope="module")
def results(servers, closed_port) -> dict[str, Any]:
    cases = [[name, f"{base(server)}/", 50_000] for name, server in servers.items()]
    cases[1][2] = "2"  # "limited", as ``-a max_urls=2`` passes it
    cases += [["refused", f"http://{SITE_HOST}:{closed_port}/", 10],
              ["policy", f"http://127.0.0.1:{servers['full'].server_address[1]}/", 10]]
    done = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps(cases)], cwd=ROOT,
                          capture_output=True, text=True, timeout=180,
                          env={**os.environ, **WORKER_ENV})
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def found(results: dict[str, Any], name: str) -> list[str]:
    items = results[name]
    assert isinstance(items, list), items
    assert all(set(item) == {"url"} for item in items)
    return [item["url"] for item in items]


def test_robots_sitemap_line_index_and_gzip_sitemaps(results, servers) -> None:
    listed = found(results, "full")
    # every page of the site, from robots.txt's sitemap, the index's plain and gzip sitemaps
    assert {canonical_url(url) for url in listed} == urls(servers["full"], SITE_PAGES)
    assert len(listed) == len(SITE_PAGES)  # each once (/article is in three sitemaps)
    assert not set(listed) & set(OTHER_SITES)  # other hosts and ports dropped


def test_sitemaps_are_read_once_and_pages_never_fetched(results, servers) -> None:
    assert isinstance(results["full"], list)
    requests = servers["full"].requests
    assert {path: requests[path] for path in ("/robots.txt", "/sitemap.xml",
                                              "/sitemap-pages.xml", "/sitemap-archive.xml.gz",
                                              "/sitemap-news.xml", "/sitemap-gone.xml")} == {
        "/robots.txt": 2,  # the robots.txt middleware's own fetch, and the spider's
        "/sitemap.xml": 1,  # though the index lists itself
        "/sitemap-pages.xml": 1, "/sitemap-archive.xml.gz": 1, "/sitemap-news.xml": 1,
        "/sitemap-gone.xml": 1,  # a 404 in the index: the rest still counts
    }
    assert not any(requests[path] for path in SITE_PAGES)


def test_max_urls_is_exact(results, servers) -> None:
    listed = found(results, "limited")
    assert len(listed) == 2
    assert {canonical_url(url) for url in listed} <= urls(servers["limited"], SITE_PAGES)


def test_either_source_alone_is_enough(results, servers) -> None:
    """robots.txt missing: the index still counts; /sitemap.xml missing: robots.txt's."""
    from_index = found(results, "no_robots")
    assert {canonical_url(url) for url in from_index} == urls(
        servers["no_robots"], ("/article", "/contact", "/product", "/nothing"))
    from_robots = found(results, "no_index")
    assert {canonical_url(url) for url in from_robots} == urls(
        servers["no_index"], ("/news/1", "/news/2", "/article"))


def test_failures_yield_nothing(results) -> None:
    assert results["refused"] == []  # nothing listens
    assert results["policy"] == []  # refused by the source policy (127.0.0.1 is not allowed)


def test_scrapy_crawl_writes_the_urls(tmp_path, site) -> None:
    out = tmp_path / "urls.jsonl"
    env = {**os.environ, "CRAWLER_ALLOWED_NETWORKS": f"{SITE_HOST}/32",
           "CRAWLER_LOG_LEVEL": "ERROR"}
    subprocess.run([sys.executable, "-m", "scrapy", "crawl", "sitemap_urls", "-a",
                    f"url={site}/article", "-a", "max_urls=100", "-O", str(out)],
                   cwd=ROOT, env=env, check=True, timeout=120, capture_output=True)
    listed = [json.loads(line)["url"] for line in out.read_text().splitlines()]
    assert {canonical_url(url) for url in listed} == {site + path for path in SITE_PAGES}


@pytest.mark.parametrize(("kwargs", "message"), [
    ({}, "pass the site"),
    ({"url": "ftp://example.com/"}, "not an http"),
    ({"url": "https://example.com/", "max_urls": "0"}, "at least 1"),
])
def test_bad_arguments(kwargs: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SitemapUrlsSpider(**kwargs)


def test_sitemap_locations_come_from_the_site_root() -> None:
    spider = SitemapUrlsSpider(url="https://Bücher.example:8443/shop/item?id=1", max_urls="7")
    assert spider.max_urls == 7
    assert spider.robots_url == "https://xn--bcher-kva.example:8443/robots.txt"
    assert spider.sitemap_urls == ["https://xn--bcher-kva.example:8443/sitemap.xml"]


def parsed(body: bytes, url: str = "https://example.com/sitemap.xml") -> list[Any]:
    """What the spider makes of one sitemap response (no crawl: the parsing alone)."""
    spider = SitemapUrlsSpider.from_crawler(get_crawler(SitemapUrlsSpider),
                                            url="https://www.example.com/", max_urls=50)
    return list(spider._parse_sitemap(XmlResponse(url=url, body=body, request=Request(url))))


@pytest.mark.parametrize("body", [
    b"", b"not xml at all", b"<html><body>Our sitemap is a page</body></html>",
    b"<?xml version='1.0'?><rss><channel><item><link>https://example.com/a</link></item>"
    b"</channel></rss>",
])
def test_what_is_not_a_sitemap_yields_nothing(body: bytes) -> None:
    assert parsed(body) == []


def test_a_truncated_sitemap_keeps_what_was_read() -> None:
    body = (b'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            b"<url><loc>https://example.com/a</loc></url>"
            b"<url><loc>https://www.example.com/b</loc></url><url><loc>https://exa")
    assert parsed(body) == [{"url": "https://example.com/a"}, {"url": "https://www.example.com/b"}]
