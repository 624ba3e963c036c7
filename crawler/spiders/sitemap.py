"""``scrapy crawl sitemap_urls -a url=…``: the page URLs a site's sitemaps list, not fetched.

A crawl with ``use_sitemap`` seeds its frontier with these URLs (as depth 1); the frontier
applies the crawl's scope, limits and robots.txt to them like to any link. So this spider only
reads sitemaps: robots.txt ``Sitemap:`` lines and ``/sitemap.xml`` of the start URL's site
(both; either may be missing), sitemap indexes and gzip sitemaps through Scrapy's
:class:`~scrapy.spiders.SitemapSpider`, whose ``<loc>`` entries become items here instead of
requests. Sitemaps are often larger than the crawl that uses them, hence ``max_urls``: the
spider closes once it has that many.

The reading itself is :class:`SitemapReading`, which ``scrapy crawl site``
(:mod:`crawler.spiders.site`) inherits too, so both read a site's sitemaps the same way.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterable, Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from lxml import etree
from scrapy import Request
from scrapy.exceptions import CloseSpider
from scrapy.spiders import SitemapSpider
from scrapy.utils.sitemap import Sitemap, sitemap_urls_from_robots

from core.canonical import canonical_url, same_site
from core.controls import escaped
from core.policy import ascii_url
from crawler.spiders.base import as_http_url

if TYPE_CHECKING:
    from scrapy.http import Response
    from twisted.python.failure import Failure

logger = logging.getLogger(__name__)

#: Page URLs one run yields by default: one sitemap file holds at most 50,000 (sitemaps.org).
MAX_URLS = 50_000


def sitemap_budget(max_pages: int) -> int:
    """Sitemap URLs worth reading for a crawl of ``max_pages`` pages (0: no limit): most of a
    site's sitemap entries fall to the crawl's filters, so ten times the budget, and at least
    1,000 — for the workers (:mod:`collecting.slice`) and ``scrapy crawl site`` alike."""
    return max(10 * max_pages, 1000) if max_pages else MAX_URLS


class SitemapReading(SitemapSpider):
    """Reads the sitemaps of one site and hands each page URL they list to
    :meth:`sitemap_page`, for spiders that want a site's page URLs from its sitemaps.

    Call :meth:`read_sitemaps_of` from ``__init__`` and yield :meth:`sitemap_start` from
    ``start()``. Only URLs of that site (:func:`~core.canonical.same_site`), each once (by
    its :func:`~core.canonical.canonical_url`; the URL keeps the ``<loc>`` as written), at
    most ``max_urls``. Sitemaps themselves may live anywhere (robots.txt may point to another
    host); the source policy and robots.txt apply to each fetch. A sitemap that is missing,
    unreachable or not a sitemap gives nothing: a site without sitemaps has no URLs, never an
    error. Scrapy's :class:`~scrapy.spiders.SitemapSpider` reads indexes and gzip sitemaps;
    its ``<loc>`` entries become calls of :meth:`sitemap_page` here instead of requests.
    """

    sitemap_rules = ()  # no <loc> of a urlset becomes a request (see _parse_sitemap)

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.max_urls = MAX_URLS
        self._sitemap_seen: set[str] = set()

    def read_sitemaps_of(self, url: str, max_urls: int | str = MAX_URLS) -> None:
        """Read the sitemaps of ``url``'s site (an http(s) URL), keeping ``max_urls`` URLs."""
        self.max_urls = int(max_urls)
        if self.max_urls < 1:
            raise ValueError(f"{self.name}: max_urls must be at least 1, not {max_urls!r}")
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        self.sitemap_site = url
        self.robots_url = urlunsplit((scheme, parts.netloc, "/robots.txt", "", ""))
        self.sitemap_urls = [urlunsplit((scheme, parts.netloc, "/sitemap.xml", "", ""))]

    def sitemap_start(self) -> Iterator[Request]:
        """The first requests: robots.txt (for its ``Sitemap:`` lines) and ``/sitemap.xml``."""
        yield Request(self.robots_url, callback=self._parse_robots, errback=self._missing)
        yield from self._sitemap_requests(self.sitemap_urls)

    def sitemap_page(self, url: str) -> Iterable[Any]:
        """What the spider makes of a page URL the sitemaps list (each URL once)."""
        raise NotImplementedError

    @property
    def full(self) -> bool:
        """Whether ``max_urls`` URLs have been found."""
        return len(self._sitemap_seen) >= self.max_urls

    def _sitemap_requests(self, urls: Iterable[str]) -> Iterator[Request]:
        """Requests for sitemaps; a URL Scrapy cannot request (a site's typo) is skipped.

        The dupefilter keeps each sitemap to one fetch: ``/sitemap.xml`` listed in robots.txt
        too, or an index that lists itself.
        """
        for url in urls:
            try:
                yield Request(ascii_url(url), callback=self._parse_sitemap,
                              errback=self._missing)
            except ValueError:
                logger.info("Not a sitemap URL: %r", url[:200])

    def _parse_robots(self, response: Response) -> Iterator[Request]:
        if self.full:
            return
        try:
            urls = list(sitemap_urls_from_robots(response.body, base_url=response.url))
        except ValueError:  # urljoin on a malformed line (a bad IPv6 host)
            urls = []
        yield from self._sitemap_requests(urls)

    def _parse_sitemap(self, response: Response) -> Iterable[Any]:  # type: ignore[override]
        """Requests for the sitemaps of an index; page URLs of a urlset."""
        if self.full:
            return
        body = self._get_sitemap_body(response)
        try:
            sitemap = Sitemap(body) if body else None
            kind = sitemap.type if sitemap else None
            if kind == "sitemapindex":
                locs = list(self._get_urls_from_sitemapindex(self.sitemap_filter(sitemap)))
                yield from self._sitemap_requests(locs)
                return
            if kind == "urlset":
                yield from self._page_urls(self.sitemap_filter(sitemap))
                return
        except (etree.LxmlError, StopIteration):
            # what was read still counts
            logger.info("Broken sitemap XML: %s", escaped(response.url))
            return
        else:
            logger.info("Not a sitemap: %s", escaped(response.url))

    def _page_urls(self, entries: Iterable[dict[str, Any]]) -> Iterator[Any]:
        for entry in entries:
            locs = [entry.get("loc")]
            if self.sitemap_alternate_links:
                locs += entry.get("alternate") or []
            for loc in locs:
                if self.full:
                    return
                if not loc or not same_site(loc, self.sitemap_site):
                    continue
                key = canonical_url(loc)
                if key in self._sitemap_seen:
                    continue
                self._sitemap_seen.add(key)
                yield from self.sitemap_page(loc)

    def _missing(self, failure: Failure) -> None:
        request = getattr(failure, "request", None)
        logger.info("No sitemap from %s: %s", escaped(request.url if request else "?"),
                    escaped(failure.value))


class SitemapUrlsSpider(SitemapReading):
    """Yields ``{"url": <loc>}`` for each page URL in the sitemaps of ``url``'s site, at most
    ``max_urls`` (``-a max_urls=…``), never fetching the pages (see :class:`SitemapReading`).
    """

    name = "sitemap_urls"

    def __init__(self, url: str | None = None, max_urls: int | str = MAX_URLS,
                 *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.url = as_http_url(self.name, url, "the site")
        self.read_sitemaps_of(self.url, max_urls)

    async def start(self) -> AsyncIterator[Request]:
        for request in self.sitemap_start():
            yield request

    def sitemap_page(self, url: str) -> Iterator[dict[str, str]]:
        yield {"url": url}
        if self.full:
            # Stop here, not at the end of the sitemaps: a site's sitemaps can be far larger
            # than the crawl that asked (downloads already open still finish).
            raise CloseSpider("max_urls")
