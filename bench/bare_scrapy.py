"""The bare side of bench/crawl.py: plain Scrapy in one process, the same extraction.

    python bench/bare_scrapy.py crawl START_URL MAX_PAGES MAX_DEPTH
    python bench/bare_scrapy.py batch URLS_FILE

``crawl``: a ``CrawlSpider`` from ``START_URL``, following every link on the start URL's host
(``LinkExtractor``, Scrapy's dupefilter), at most ``MAX_DEPTH`` hops, until ``MAX_PAGES``
pages were extracted; ``batch``: each URL of the file (one a line) once. Every HTML page,
the start page included, goes through ``crawler.extract.page.extract_page`` on a
``FetchedPage`` built as the project's spiders build it (``crawler.spiders.base.fetched_page``).
robots.txt is obeyed. Settings: the project's fetch policy where it applies to a plain
``CrawlerProcess`` (user agent, robots parser, limits, no retries or cookies, the same
reactor, the extensions off), and Scrapy's own concurrency (16 requests, 8 per domain — the
platform's ``COLLECTION_HOST_CONCURRENCY`` is 8 per host too). None of the platform: no
Redis, no database, no workers.

Prints one JSON object: pages extracted, failures (robots.txt refusals included), seconds
from ``crawl()`` to the spider's close, pages/s, the CPU seconds used meanwhile and the
concurrency.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scrapy import Request, Spider, signals  # noqa: E402
from scrapy.crawler import CrawlerProcess  # noqa: E402
from scrapy.exceptions import CloseSpider  # noqa: E402
from scrapy.http import HtmlResponse  # noqa: E402
from scrapy.linkextractors import LinkExtractor  # noqa: E402
from scrapy.spiders import CrawlSpider, Rule  # noqa: E402

from crawler import settings as project  # noqa: E402
from crawler.extract.fetched import FetchedPage  # noqa: E402
from crawler.extract.page import extract_page  # noqa: E402
from crawler.spiders.base import fetched_page  # noqa: E402

#: The project's settings that mean the same in a plain CrawlerProcess (not its download
#: handler, source policy or shared robots cache: those are the warm worker's).
KEPT = ("USER_AGENT", "ROBOTSTXT_OBEY", "ROBOTSTXT_PARSER", "DOWNLOAD_MAXSIZE",
        "DOWNLOAD_WARNSIZE", "DOWNLOAD_TIMEOUT", "REDIRECT_MAX_TIMES", "RETRY_ENABLED",
        "COOKIES_ENABLED", "HTTPCACHE_ENABLED", "HTTPPROXY_ENABLED", "CONCURRENT_ITEMS",
        "EXTENSIONS", "TELNETCONSOLE_ENABLED", "REMOTE_CONTROL_ENABLED",
        "WARN_ON_GENERATOR_RETURN_VALUE", "TWISTED_REACTOR", "LOG_LEVEL")


class Counting:
    """Extraction and counting shared by both spiders."""

    max_pages = 0
    pages = failures = 0

    def extract(self, response: Any) -> dict | None:
        if not isinstance(response, HtmlResponse) or (self.max_pages
                                                      and self.pages >= self.max_pages):
            return None
        data = extract_page(fetched_page(response.url, response))
        self.pages += 1
        if self.max_pages and self.pages >= self.max_pages:
            raise CloseSpider("max_pages")
        return {"url": response.url, "title": data.title}

    def failed(self, failure: Any) -> None:
        self.failures += 1


class SiteSpider(Counting, CrawlSpider):
    name = "bare_site"
    rules = (Rule(LinkExtractor(), callback="parse_page", follow=True, errback="failed"),)

    def __init__(self, url: str, max_pages: int, *args: Any, **kwargs: Any):
        self.start_urls = [url]
        self.allowed_domains = [urlsplit(url).hostname]
        self.max_pages = max_pages
        super().__init__(*args, **kwargs)

    def parse_start_url(self, response: Any) -> Any:
        item = self.extract(response)
        return [item] if item else []

    def parse_page(self, response: Any) -> Any:
        item = self.extract(response)
        if item:
            yield item


class BatchSpider(Counting, Spider):
    name = "bare_batch"

    def __init__(self, urls: list[str], *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.urls = urls

    async def start(self) -> Any:
        for url in self.urls:
            yield Request(url, callback=self.parse, errback=self.failed)

    def parse(self, response: Any) -> Any:
        item = self.extract(response)
        if item:
            yield item


def settings(max_depth: int = 0) -> dict[str, Any]:
    chosen = {name: getattr(project, name) for name in KEPT}
    return {**chosen, "DEPTH_LIMIT": max_depth}


def main() -> None:
    mode = sys.argv[1]
    # The extractor's lazy imports and caches, outside the timed crawl (the workers are warm).
    extract_page(FetchedPage.from_html("http://warm.invalid/", "<html><body><p>Warm up the "
                                       "extractor before timing anything.</p></body></html>"))
    if mode == "crawl":
        spider, kwargs = SiteSpider, {"url": sys.argv[2], "max_pages": int(sys.argv[3])}
        chosen = settings(int(sys.argv[4]))
    else:
        urls = Path(sys.argv[2]).read_text().split()
        spider, kwargs, chosen = BatchSpider, {"urls": urls}, settings()
    process = CrawlerProcess(chosen)
    crawler = process.create_crawler(spider)
    ended: list[float] = []
    crawler.signals.connect(lambda **_: ended.append(time.perf_counter()), signals.spider_closed,
                            weak=False)
    cpu = time.process_time()
    began = time.perf_counter()
    process.crawl(crawler, **kwargs)
    process.start()
    seconds = ended[0] - began
    cpu = time.process_time() - cpu
    s = crawler.settings
    print(json.dumps({"pages": crawler.spider.pages, "failures": crawler.spider.failures,
                      "seconds": seconds, "pages_per_s": crawler.spider.pages / seconds,
                      "cpu_s": {"bare": cpu},
                      "concurrent_requests": s.getint("CONCURRENT_REQUESTS"),
                      "per_domain": s.getint("CONCURRENT_REQUESTS_PER_DOMAIN")}))


if __name__ == "__main__":
    main()
