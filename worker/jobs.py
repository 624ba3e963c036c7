"""Job functions: what the API enqueues, and what batch code may enqueue itself.

Each takes plain values and returns a plain dict: the page result (``core.items.PageResult``
as a dict, the shape of a collection result). A failed fetch is a *successful* job whose result
says ``"status": "failed"`` with a stable error code — so callers never parse tracebacks; only
a crashed or killed job ends up as an RQ failure.

    from worker import jobs
    from worker.queues import queue, redis_connection, INTERACTIVE
    job = queue(INTERACTIVE, redis_connection()).enqueue(
        jobs.scrape, "https://example.com/", include_links=False)

Each page operation of ``core.operations`` has its job function here, named after it
(``scrape``, ``contacts``, ``products``, ``video_platform``), all :func:`run_operation`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from scrapy import Spider
from scrapy.utils.misc import load_object

from core.contract import PageStatus
from core.items import PageResult, plain
from core.operations import PAGE_OPERATIONS, Operation, operation
from crawler.exceptions import CrawlError, FetchFailed
from crawler.runner import shared_crawler
from crawler.spiders.operations import spider_class
from worker import page_cache


def run_single_page(spider: str | type[Spider], url: str, **options: Any) -> dict[str, Any]:
    """Run a single-page spider in the warm crawler; always returns one page result.

    ``spider`` is a spider class, a spider's name (``"page"``) or the dotted path of a Spider
    class, for batch code with spiders of its own (arguments travel as JSON, so a class itself
    cannot).
    """
    target: str | type[Spider] = spider
    if isinstance(spider, str) and "." in spider:
        target = load_object(spider)
        if not (isinstance(target, type) and issubclass(target, Spider)):
            raise TypeError(f"{spider} is not a Spider class")
    return plain(_crawled(target, url, **options)[0])


def _crawled(spider: str | type[Spider], url: str, **arguments: Any) -> list[Any]:
    """The items of one single-page crawl: its page result first, always."""
    try:
        items = shared_crawler().crawl(spider, url=url, **arguments)
    except CrawlError as error:
        error.url = error.url or url
        items = [PageResult(url=url, status=PageStatus.FAILED, error=error.as_dict())]
    results = [item for item in items if isinstance(item, PageResult)]
    if not results:
        error = FetchFailed("The crawl ended without a result.", url=url)
        results = [PageResult(url=url, status=PageStatus.FAILED, error=error.as_dict())]
    # the result first (a spider may yield its ResponseCaching before: the video's, whose
    # result waits for the Data API)
    return [results[0], *(item for item in items if not isinstance(item, PageResult))]


def run_operation(name: str, url: str, *, cache: dict[str, Any] | None = None,
                  **options: Any) -> dict[str, Any]:
    """The job of page operation ``name`` (core.operations: ``"scrape"``, ``"contacts"``…) on
    ``url``, with its options (the others are refused: TypeError).

    ``cache`` (the API's, :mod:`worker.page_cache`): ``{"key"}`` keeps a successful answer in
    the page cache; with ``"etag"``/``"last_modified"`` (a stale entry's) the page is asked
    for conditionally, and a 304 answers with the cached answer, fetched now."""
    extraction = operation(name).extraction
    if extraction is None:
        raise ValueError(f"{name} is not a page operation")
    unknown = set(options) - {option.name for option in extraction.options}
    if unknown:
        raise TypeError(f"{name} takes no option {', '.join(sorted(unknown))}")
    spider, values = spider_class(extraction.name), extraction.option_values(options)
    if cache is None:
        return run_single_page(spider, url, **values)
    return page_cache.fetch(lambda **more: _crawled(spider, url, **values, **more), cache,
                            operation=name, url=url)


def _operation_job(page: Operation) -> Callable[..., dict[str, Any]]:
    """``run_operation`` for one page operation, named after it: what batch code enqueues."""

    def job(url: str, **options: Any) -> dict[str, Any]:
        return run_operation(page.name, url, **options)

    job.__name__ = job.__qualname__ = page.name
    job.__module__ = __name__
    job.__doc__ = f"``POST {page.path}``: {page.summary} (:func:`run_operation`)."
    return job


#: One job function per page operation, named after it (``scrape``, ``contacts``, ``products``,
#: ``video_platform``): RQ finds each by that name in this module.
for _page in PAGE_OPERATIONS:
    globals()[_page.name] = _operation_job(_page)
