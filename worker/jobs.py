"""Job functions: what the API enqueues, and what batch jobs may enqueue themselves.

Each takes plain values and returns a plain dict: the page result (``core.items.PageResult``
as a dict, the shape of a collection result). A failed fetch is a *successful* job whose result
says ``"status": "failed"`` with a stable error code — so callers never parse tracebacks; only
a crashed or killed job ends up as an RQ failure.

    from worker.jobs import scrape
    from worker.queues import queue, redis_connection, INTERACTIVE
    job = queue(INTERACTIVE, redis_connection()).enqueue(scrape, "https://example.com/")
"""

from __future__ import annotations

from typing import Any

from scrapy import Spider
from scrapy.utils.misc import load_object

from core.contract import PageStatus
from core.items import PageResult, plain
from crawler.exceptions import CrawlError, FetchFailed
from crawler.runner import shared_crawler


def run_single_page(spider: str, url: str, **options: Any) -> dict[str, Any]:
    """Run a single-page spider in the warm crawler; always returns one page result.

    ``spider`` is a spider's name (``"page"``) or the dotted path of a Spider class, for batch
    code with spiders of its own (arguments travel as JSON, so a class itself cannot).
    """
    target: str | type[Spider] = spider
    if "." in spider:
        target = load_object(spider)
        if not (isinstance(target, type) and issubclass(target, Spider)):
            raise TypeError(f"{spider} is not a Spider class")
    try:
        items = shared_crawler().crawl(target, url=url, **options)
    except CrawlError as error:
        error.url = error.url or url
        items = [PageResult(url=url, status=PageStatus.FAILED, error=error.as_dict())]
    if not items:
        error = FetchFailed("The crawl ended without a result.", url=url)
        items = [PageResult(url=url, status=PageStatus.FAILED, error=error.as_dict())]
    return plain(items[0])


def scrape(url: str, include_links: bool = True, include_metadata: bool = True) -> dict[str, Any]:
    """``POST /scrape``: title, readable text, links and metadata of one page."""
    return run_single_page(
        "page", url, include_links=include_links, include_metadata=include_metadata
    )


def contacts(url: str) -> dict[str, Any]:
    """``POST /contacts``: emails, phones, social profiles and organisation of one page."""
    return run_single_page("contacts", url)


def products(url: str) -> dict[str, Any]:
    """``POST /products``: products and offers from the page's structured data."""
    return run_single_page("products", url)


def video(url: str) -> dict[str, Any]:
    """``POST /video-platform``: metadata of one public, embeddable video (any link form)."""
    return run_single_page("video", url)
