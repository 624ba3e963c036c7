"""The single-page spiders as a collection runs them: the same result, plus the page's links.

A collection page is fetched and extracted exactly as ``/scrape``, ``/contacts`` or
``/products`` would (one result shape everywhere), and a crawl also needs what the page links
to and its ``rel=canonical`` (duplicates), and politeness its site's robots.txt
``Crawl-delay``. Reading those from the :class:`FetchedPage` the
extractor parsed already costs no second parse.

The classes are made per extractor on demand (:func:`collection_spider`), not defined at
module level: they keep their parent's ``name``, and Scrapy's spider loader would report two
spiders of one name.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scrapy import Request

from core.items import PageResult, ResponseCaching
from core.operations import COLLECTION_EXTRACTS
from core.scope import CRAWL_SITE
from crawler.admission import KnownRefusals, known_refusals, robots_user_agent
from crawler.extract.links import PageLinks, page_links
from crawler.middlewares import cached_robots, crawl_delay_of
from crawler.spiders.base import SinglePageSpider, as_bool, response_caching
from crawler.spiders.operations import spider_class

if TYPE_CHECKING:
    from scrapy.http import Response

    from crawler.extract.fetched import FetchedPage



@dataclass
class CollectedPage:
    """One page of a collection: its result, the links to follow (when following), and the
    page's ``rel=canonical``."""

    result: PageResult
    links: tuple[str, ...] = ()
    canonical: str | None = None
    #: The site's robots.txt Crawl-delay for our user agent (0: none); None when the page
    #: never reached the spider (a timeout), so nothing is known.
    crawl_delay: float | None = None
    #: What refuses a link before it is fetched (policy, the site's robots.txt), when
    #: following links.
    refusals: KnownRefusals | None = None
    #: What the page's response says about keeping its answer (a collection with
    #: ``max_age`` keeps it in the page cache); None when no response came.
    caching: ResponseCaching | None = None


class _Collecting(SinglePageSpider):
    """Mixed before an extractor's spider: keeps the page's links from its parse."""

    def __init__(self, url: str | None = None, follow: Any = False, site: str | None = None,
                 *args: Any, **kwargs: Any):
        super().__init__(url, *args, **kwargs)
        self.follow = as_bool(follow)
        #: A crawl's start URL: the page may not redirect off its site (:data:`CRAWL_SITE`).
        self.site = site
        self._found: PageLinks | None = None

    async def start(self) -> AsyncIterator[Request | PageResult]:
        async for output in super().start():
            if self.site and isinstance(output, Request):
                output.meta[CRAWL_SITE] = self.site
            yield output

    def extract(self, page: FetchedPage) -> Any:
        data = super().extract(page)
        if self.follow:  # a batch follows nothing and claims no address: ~0.7 ms a page saved
            self._found = page_links(page)
        return data

    def parse(self, response: Response) -> Iterator[CollectedPage]:
        for result in super().parse(response):
            found = self._found
            yield CollectedPage(
                result=result,
                links=found.links if found is not None and self.follow else (),
                canonical=found.canonical if found is not None else None,
                crawl_delay=self._crawl_delay(),
                refusals=(known_refusals(response.url, self.crawler.settings)
                          if self.follow else None),
                caching=response_caching(response))

    def failed(self, failure: Any) -> Iterator[CollectedPage]:
        for result in super().failed(failure):
            yield CollectedPage(result=result, crawl_delay=self._crawl_delay())

    def _crawl_delay(self) -> float:
        """The site's Crawl-delay (0: none): its robots.txt was read before the page was
        requested (none cached: it had none, or it could not be read; so no delay)."""
        return crawl_delay_of(cached_robots(self.url),
                              robots_user_agent(self.crawler.settings)) or 0.0


@functools.cache
def collection_spider(extract: str) -> type[SinglePageSpider]:
    """The spider that runs extractor ``extract`` for a collection (KeyError if it is not one a
    collection may run: :data:`core.operations.COLLECTION_EXTRACTS`)."""
    if extract not in COLLECTION_EXTRACTS:
        raise KeyError(extract)
    base = spider_class(extract)
    return type(f"Collected{base.__name__}", (_Collecting, base), {"__module__": __name__})
