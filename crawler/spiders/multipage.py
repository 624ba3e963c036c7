"""The base of ``scrapy crawl site`` and ``scrapy crawl batch``: many pages, each fetched and
extracted as a collection's page is, taken from a collection's frontier.

A worker runs each page of a collection as a single-page job of
:func:`~crawler.spiders.collected.collection_spider` (one spider object per page, fed to its
long-lived crawler). These spiders run many pages in one crawl of their own, and hand each
page's response to the same per-page spider object: the same request, the same extractor, the
same failures and error codes (robots.txt, source policy, non-HTML…), the same
:class:`~core.items.PageResult` — so a feed export writes what the API stores.

Which pages they fetch is decided as for a collection, by the same code: the workers'
:class:`~collecting.frontier.Frontier` (admission by canonical URL, the page budget, claims),
on a Redis server started for the crawl alone (:class:`~collecting.private_redis.PrivateRedis`)
when it starts and stopped when it closes. Nothing to set up: ``scrapy crawl site`` needs no
platform running.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from scrapy import Request, Spider

from collecting.frontier import Entry, Frontier
from collecting.private_redis import PrivateRedis
from core.items import PageResult
from core.operations import COLLECTION_EXTRACTS
from core.policy import ascii_url
from crawler.spiders.collected import CollectedPage, collection_spider

if TYPE_CHECKING:
    from scrapy.http import Response
    from twisted.python.failure import Failure

logger = logging.getLogger(__name__)

#: What a page's callback yields: its result, and the requests it makes possible.
Output = PageResult | Request


class MultiPageSpider(Spider):
    """Fetches entries (:class:`~collecting.frontier.Entry`: a URL, its canonical key, its depth)
    of its :attr:`frontier` (opened by :meth:`open_frontier`) with :meth:`page_request`; each
    page's :class:`CollectedPage` goes to :meth:`collected`, which subclasses implement (what
    to yield, what to fetch next).

    ``-a extract=page|contacts|products`` (default ``page``) picks the extractor, as a
    collection's ``extract`` does.
    """

    def __init__(self, *args: Any, extract: str = "page", **kwargs: Any):
        super().__init__(*args, **kwargs)
        if extract not in COLLECTION_EXTRACTS:
            raise ValueError(f"{self.name}: extract must be one of "
                             f"{', '.join(COLLECTION_EXTRACTS)}, not {extract!r}")
        self.extract = extract
        self._page_spider = collection_spider(extract)
        #: This crawl's frontier, from :meth:`open_frontier` until the crawl closes.
        self.frontier: Frontier | None = None
        self._redis: PrivateRedis | None = None

    def open_frontier(self) -> Frontier:
        """Start this crawl's frontier (on a private Redis, stopped by :meth:`closed`)."""
        self._redis = PrivateRedis()
        self.frontier = Frontier(self._redis.client, self.name)
        return self.frontier

    def closed(self, reason: str) -> None:
        """Scrapy's last call: the frontier goes with its Redis."""
        if self._redis is not None:
            self._redis.close()
            self.frontier = self._redis = None

    def page_request(self, entry: Entry, follow: bool = False) -> Request:
        """The request of one page, as its single-page spider would make it (``follow``: read
        the links it has too)."""
        return Request(ascii_url(entry.url), callback=self._parse_page, errback=self._failed_page,
                       dont_filter=True,  # the frontier dedupes, by canonical URL
                       cb_kwargs={"entry": entry, "follow": follow})

    def collected(self, entry: Entry, page: CollectedPage) -> Iterator[Output]:
        raise NotImplementedError

    def _page(self, entry: Entry, follow: bool) -> Any:
        """The page's own single-page spider object: what parses it, as in a worker (bound to
        this crawl, as the worker binds it to its long-lived one: it reads the settings)."""
        page = self._page_spider(url=entry.url, follow=follow)
        page.crawler, page.settings = self.crawler, self.crawler.settings
        return page

    def _parse_page(self, response: Response, entry: Entry, follow: bool) -> Iterator[Output]:
        for page in self._page(entry, follow).parse(response):
            yield from self.collected(entry, page)

    def _failed_page(self, failure: Failure) -> Iterator[Output]:
        kwargs = failure.request.cb_kwargs
        for page in self._page(kwargs["entry"], kwargs["follow"]).failed(failure):
            yield from self.collected(kwargs["entry"], page)

